/**
 * RIFF/WAVE files over 4 GiB, whose 32-bit sizes are wrapped or capped by their writers: the
 * probe reads the whole file's duration at once (ffprobe alone walked the rest of such a file
 * into the probe timeout), and ffmpeg is told to read the data to the end of the file. The files
 * are sparse, so they take no disk. (That decoding then reaches the end was checked by hand: a
 * 4.4 GB file with a capped header decoded to 22,916.7 s, its full length, where the header
 * states 22,369.6 s; too slow for the suite.)
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { inputOptions, probeLargeWav } from "../../pipeline/media/LargeWav.ts"
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
    expect(inputOptions(capped())).toEqual(["-ignore_length", "1"])
    expect(inputOptions(wrapped())).toEqual(["-ignore_length", "1"])

    // A WAV of 4 GiB or less states its own length; RF64 states 64-bit sizes; other containers
    // are not WAV at all; a missing file is the decoder's to report.
    const small = sparse("small.wav", wavHeader({ sampleRate: 48_000, channels: 2, dataBytes: 1e9 }), 1e9 + WAV_HEADER_BYTES)
    const rf64Head = header(0xffffffff, 0xffffffff)
    rf64Head.write("RF64", 0, "latin1")
    const rf64 = sparse("big.rf64.wav", rf64Head)
    const mp4 = sparse("big.mp4", Buffer.from("\u0000\u0000\u0000\u0018ftypmp42", "latin1"))
    for (const file of [small, rf64, mp4, path.join(scratch, "missing.wav")]) {
      expect(inputOptions(file)).toEqual([])
      expect(probeLargeWav(file)).toBeUndefined()
    }
  })
})
