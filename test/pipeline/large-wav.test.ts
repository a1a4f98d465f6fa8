/**
 * RIFF/WAVE files over 4 GiB, whose 32-bit sizes are wrapped or capped by their writers: the
 * probe reads the whole file's duration at once (ffprobe alone walked the rest of such a file
 * into the probe timeout), the WASM ffmpeg reads the samples as raw PCM (decoding starts at
 * once, and a clip past the header's stated length renders), a native ffmpeg is told to read
 * the data to the end of the file. The files are sparse, so they take no disk. (That decoding
 * reaches the end was checked by hand: a 4.4 GB file with a capped header decoded to
 * 22,916.7 s, its full length, where the header states 22,369.6 s; too slow for the suite.)
 */
import { Effect, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { inputOptions, probeLargeWav } from "../../pipeline/media/LargeWav.ts"
import { ClipRenderer } from "../../pipeline/render/ClipRenderer.ts"
import { MediaDecoder } from "../../pipeline/media/MediaDecoder.ts"
import { WAV_HEADER_BYTES, wavHeader } from "../../pipeline/media/Wav.ts"

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-large-wav-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const FILE_BYTES = 5e9
/** 48 kHz stereo 16-bit: 192,000 bytes per second. */
const fullSeconds = (FILE_BYTES - WAV_HEADER_BYTES) / 192_000

/** A sparse file of `bytes` starting with `head`. */
const sparse = (name: string, head: Buffer, bytes = FILE_BYTES) => {
  const file = path.join(scratch, name)
  fs.writeFileSync(file, head)
  fs.truncateSync(file, bytes)
  return file
}

/** A 48 kHz stereo header whose sizes say `riffSize` and `dataSize`. */
const header = (riffSize: number, dataSize: number) => {
  const h = wavHeader({ sampleRate: 48_000, channels: 2, dataBytes: 1_000 })
  h.writeUInt32LE(riffSize, 4)
  h.writeUInt32LE(dataSize, 40)
  return h
}

const capped = () => sparse("capped.wav", header(0xffffffff, 0xffffffff - 36))
const wrapped = () => {
  const data = (FILE_BYTES - WAV_HEADER_BYTES) % 0x1_0000_0000
  return sparse("wrapped.wav", header(data + 36, data))
}

const probe = (file: string) =>
  Effect.runPromise(Effect.provide(
    Effect.gen(function*() {
      const decoder = yield* MediaDecoder
      return yield* decoder.probe(file)
    }),
    MediaDecoder.layer({ backend: "wasm" })
  ))

describe("WAV files over 4 GiB", () => {
  it("a capped or a wrapped header: the probe gives the whole file's duration, at once", async () => {
    for (const file of [capped(), wrapped()]) {
      const started = performance.now()
      const result = await probe(file)
      expect(result.hasAudio).toBe(true)
      expect(result.durationSeconds).toBeCloseTo(fullSeconds, 3)
      expect(performance.now() - started).toBeLessThan(5_000)
    }
  }, 30_000)

  it("ffmpeg reads their data to the end of the file; other files get no extra options", () => {
    // The WASM ffmpeg (5.1) reads the samples as raw PCM; a native one, of unknown version,
    // reads the WAV with its length ignored.
    for (const file of [capped(), wrapped()]) {
      expect(inputOptions(file, "wasm")).toEqual(["-f", "s16le", "-sample_rate", "48000", "-ch_layout", "2c", "-skip_initial_bytes", "44"])
      expect(inputOptions(file, "native")).toEqual(["-ignore_length", "1"])
    }
    // float samples in a WAVE_FORMAT_EXTENSIBLE header (sub-format 3), 6 channels at 96 kHz
    const ext = Buffer.alloc(68)
    ext.write("RIFF", 0, "latin1")
    ext.writeUInt32LE(0xffffffff, 4)
    ext.write("WAVEfmt ", 8, "latin1")
    ext.writeUInt32LE(40, 16)
    ext.writeUInt16LE(0xfffe, 20)
    ext.writeUInt16LE(6, 22)
    ext.writeUInt32LE(96_000, 24)
    ext.writeUInt32LE(96_000 * 6 * 4, 28)
    ext.writeUInt16LE(24, 32)
    ext.writeUInt16LE(32, 34)
    ext.writeUInt16LE(22, 36)
    ext.writeUInt16LE(3, 44)
    ext.write("data", 60, "latin1")
    ext.writeUInt32LE(0xffffffff, 64)
    const float = sparse("float.wav", ext)
    expect(inputOptions(float, "wasm")).toEqual(["-f", "f32le", "-sample_rate", "96000", "-ch_layout", "6c", "-skip_initial_bytes", "68"])
    expect(probeLargeWav(float)?.durationSeconds).toBeCloseTo((FILE_BYTES - 68) / (96_000 * 6 * 4), 6)
    // a coding that is not plain PCM (ADPCM, tag 2) keeps the WAV reader
    const adpcm = header(0xffffffff, 0xffffffff)
    adpcm.writeUInt16LE(2, 20)
    expect(inputOptions(sparse("adpcm.wav", adpcm), "wasm")).toEqual(["-ignore_length", "1"])

    // A WAV of 4 GiB or less states its own length; RF64 states 64-bit sizes; other containers
    // are not WAV at all; a missing file is the decoder's to report.
    const small = sparse("small.wav", wavHeader({ sampleRate: 48_000, channels: 2, dataBytes: 1e9 }), 1e9 + WAV_HEADER_BYTES)
    const rf64Head = header(0xffffffff, 0xffffffff)
    rf64Head.write("RF64", 0, "latin1")
    const rf64 = sparse("big.rf64.wav", rf64Head)
    const mp4 = sparse("big.mp4", Buffer.from("\u0000\u0000\u0000\u0018ftypmp42", "latin1"))
    for (const file of [small, rf64, mp4, path.join(scratch, "missing.wav")]) {
      expect(inputOptions(file, "wasm")).toEqual([])
      expect(inputOptions(file, "native")).toEqual([])
      expect(probeLargeWav(file)).toBeUndefined()
    }
  })

  it("a clip past the header's stated length renders from the rest of the file", async () => {
    // The capped header states 22,369.6 s; the file holds 26,041.5 s.
    const file = capped()
    const outputPath = path.join(scratch, "late.mp4")
    await Effect.runPromise(Effect.provide(
      Effect.gen(function*() {
        const renderer = yield* ClipRenderer
        yield* renderer.render({
          inputPath: file,
          outputPath,
          startSeconds: 25_000,
          durationSeconds: 1.5,
          style: "line",
          words: [],
          title: "late"
        }, () => Effect.void)
      }),
      ClipRenderer.layer({ backend: "wasm" })
    ))
    // an mp4 with a video track of the clip's length (mvhd duration / timescale)
    const mp4 = fs.readFileSync(outputPath)
    const mvhd = mp4.indexOf("mvhd")
    expect(mvhd).toBeGreaterThan(0)
    const version = mp4[mvhd + 4]
    const timescale = version === 1 ? mp4.readUInt32BE(mvhd + 24) : mp4.readUInt32BE(mvhd + 16)
    const duration = version === 1 ? Number(mp4.readBigUInt64BE(mvhd + 28)) : mp4.readUInt32BE(mvhd + 20)
    expect(duration / timescale).toBeCloseTo(1.5, 1)
  }, 60_000)

  it("the WASM decoder starts streaming at once (it used to walk the silence past the stated end first)", async () => {
    const started = performance.now()
    const samples = await Effect.runPromise(Effect.provide(
      Effect.gen(function*() {
        const decoder = yield* MediaDecoder
        return yield* decoder.decode(capped()).pipe(Stream.take(10), Stream.runFold(() => 0, (n, chunk) => n + chunk.length))
      }),
      MediaDecoder.layer({ backend: "wasm" })
    ))
    expect(samples).toBeGreaterThan(16_000)
    expect(performance.now() - started).toBeLessThan(15_000)
  }, 60_000)
})
