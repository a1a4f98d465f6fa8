/**
 * The one WAV writer (pipeline/media/Wav.ts): headers a RIFF reader and our decoder accept,
 * sizes beyond 32 bits written as "to the end of the file", samples clipped and scaled to 16 bits.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { MediaDecoder } from "../../pipeline/media/MediaDecoder.ts"
import { pcm16Wav, WAV_HEADER_BYTES, wavHeader } from "../../pipeline/media/Wav.ts"
import { readWavPcm16 } from "../support/wav.ts"

describe("WAV writer", () => {
  it("a 48 kHz stereo header states the format and sizes", () => {
    const header = wavHeader({ sampleRate: 48_000, channels: 2, dataBytes: 1_000 })
    expect(header.length).toBe(WAV_HEADER_BYTES)
    expect(header.toString("ascii", 0, 4)).toBe("RIFF")
    expect(header.readUInt32LE(4)).toBe(1_036)
    expect(header.toString("ascii", 8, 16)).toBe("WAVEfmt ")
    expect([header.readUInt16LE(20), header.readUInt16LE(22), header.readUInt32LE(24)]).toEqual([1, 2, 48_000])
    expect([header.readUInt32LE(28), header.readUInt16LE(32), header.readUInt16LE(34)]).toEqual([192_000, 4, 16])
    expect(header.toString("ascii", 36, 40)).toBe("data")
    expect(header.readUInt32LE(40)).toBe(1_000)
  })

  it("data beyond 4 GiB is stated as 'to the end of the file', and the decoder times all of it", async () => {
    const header = wavHeader({ sampleRate: 48_000, channels: 2, dataBytes: 5e9 })
    expect(header.readUInt32LE(4)).toBe(0xffffffff)
    expect(header.readUInt32LE(40)).toBe(0xffffffff)
    // The largest size that fits is still stated exactly.
    expect(wavHeader({ sampleRate: 48_000, channels: 2, dataBytes: 0xffffffff - 36 }).readUInt32LE(40)).toBe(0xffffffff - 36)

    // A sparse 5 GB file (no disk used): the WASM probe reads its duration from the header at once.
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-wav-")), "long.wav")
    fs.writeFileSync(file, header)
    fs.truncateSync(file, WAV_HEADER_BYTES + 5e9)
    const probe = await Effect.runPromise(Effect.provide(
      Effect.gen(function*() {
        const decoder = yield* MediaDecoder
        return yield* decoder.probe(file)
      }),
      MediaDecoder.layer({ backend: "wasm" })
    )).finally(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }))
    expect(probe.hasAudio).toBe(true)
    expect(probe.durationSeconds).toBeCloseTo(5e9 / 192_000, 1)
  }, 30_000)

  it("pcm16Wav reads back as the same samples, clipped to [-1, 1]", () => {
    const samples = Float32Array.from([0, 0.5, -0.5, 1, -1, 2, -3, 0.25])
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-wav-")), "a.wav")
    fs.writeFileSync(file, pcm16Wav(samples, 16_000))
    const read = readWavPcm16(file)
    fs.rmSync(path.dirname(file), { recursive: true, force: true })
    expect(read.sampleRate).toBe(16_000)
    const expected = [0, 0.5, -0.5, 1, -1, 1, -1, 0.25]
    expect(Array.from(read.samples).map((v, i) => Math.abs(v - expected[i]!) < 1e-4)).toEqual(expected.map(() => true))
  })
})
