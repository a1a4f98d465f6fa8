import { assert, describe, it, type Vitest } from "@effect/vitest"
import { Effect, Exit, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { decodeFailure, emptyFileReason, ffmpegReason, noAudioMessage, noAudioReason } from "../../pipeline/media/DecodeErrors.ts"
import { nativeFfmpegAvailable } from "../../pipeline/media/FfmpegNative.ts"
import { MediaDecoder, SAMPLE_RATE } from "../../pipeline/media/MediaDecoder.ts"
import { nativeFfmpegRuns } from "../support/nativeFfmpeg.ts"
import { readWavPcm16 as readWav, writeRepeatedWav } from "../support/wav.ts"

const media = path.resolve(import.meta.dirname, "../../../shared/media")
const file = (name: string) => path.join(media, name)

/** Durations from shared/models/README.md (speech-ratio table). */
const durations: Record<string, number> = {
  "a01_slt_budget.wav": 7.05,
  "f01_library.mp3": 7.85,
  "f02_library.m4a": 7.87,
  "f03_library.ogg": 7.85,
  "f04_library.flac": 7.85,
  "f05_podcast_video.mp4": 8.9
}

const concat = (chunks: ReadonlyArray<Float32Array>) => {
  const out = new Float32Array(chunks.reduce((n, c) => n + c.length, 0))
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.length
  }
  return out
}

const decodeAll = (name: string) =>
  Effect.gen(function*() {
    const decoder = yield* MediaDecoder
    const chunks = yield* Stream.runCollect(decoder.decode(file(name)))
    return concat(chunks)
  })

/** Pearson correlation of two equally long signals. */
const correlation = (a: Float32Array, b: Float32Array) => {
  const n = Math.min(a.length, b.length)
  let ma = 0
  let mb = 0
  for (let i = 0; i < n; i++) {
    ma += a[i]!
    mb += b[i]!
  }
  ma /= n
  mb /= n
  let ab = 0
  let aa = 0
  let bb = 0
  for (let i = 0; i < n; i++) {
    const x = a[i]! - ma
    const y = b[i]! - mb
    ab += x * y
    aa += x * x
    bb += y * y
  }
  return ab / Math.sqrt(aa * bb)
}

const decoderContract = (it: Vitest.MethodsNonLive<MediaDecoder>) => {
  it.effect("a WAV that is already 16 kHz mono s16 decodes to exactly its samples", () =>
    Effect.gen(function*() {
      const decoded = yield* decodeAll("a01_slt_budget.wav")
      const reference = readWav(file("a01_slt_budget.wav")).samples
      assert.strictEqual(decoded.length, reference.length)
      let maxDiff = 0
      for (let i = 0; i < decoded.length; i++) maxDiff = Math.max(maxDiff, Math.abs(decoded[i]! - reference[i]!))
      assert.strictEqual(maxDiff, 0)
    }))

  it.effect("every compressed format decodes to the expected length and to the same speech as the WAV", () =>
    Effect.gen(function*() {
      const reference = readWav(file("a03_espeak_library.wav")).samples
      for (const [name, seconds] of Object.entries(durations)) {
        const decoded = yield* decodeAll(name)
        assert.approximately(decoded.length / SAMPLE_RATE, seconds, 0.06, name)
        if (name.startsWith("f0") && name !== "f05_podcast_video.mp4") {
          // Encoders add a few ms of priming delay; compare at the best small lag.
          let best = -1
          for (let lag = 0; lag <= 2000; lag += 8) {
            best = Math.max(best, correlation(decoded.subarray(lag), reference))
          }
          assert.isAbove(best, 0.9, `${name} correlates with a03`)
        }
      }
    }))

  it.effect("x01 (video without audio) fails NoAudio", () =>
    Effect.gen(function*() {
      const decoder = yield* MediaDecoder
      const exit = yield* Effect.exit(Stream.runDrain(decoder.decode(file("x01_video_no_audio.mp4"))))
      assert.isTrue(Exit.isFailure(exit))
      const error = yield* Effect.flip(Stream.runDrain(decoder.decode(file("x01_video_no_audio.mp4"))))
      assert.strictEqual(error._tag, "NoAudio")
      assert.strictEqual(error.reason, "it has no audio stream (a video without sound?)")
    }))

  it.effect("an empty file fails NoAudio saying it is empty, not with ffmpeg's words", () =>
    Effect.gen(function*() {
      const decoder = yield* MediaDecoder
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-empty-"))
      fs.writeFileSync(path.join(dir, "empty.mp3"), "")
      const error = yield* Effect.flip(Stream.runDrain(decoder.decode(path.join(dir, "empty.mp3"))))
      fs.rmSync(dir, { recursive: true, force: true })
      assert.strictEqual(error._tag, "NoAudio")
      assert.strictEqual(error.reason, emptyFileReason)
    }))

  it.effect("x02 (random bytes named .mp3) fails NoAudio", () =>
    Effect.gen(function*() {
      const decoder = yield* MediaDecoder
      const error = yield* Effect.flip(Stream.runDrain(decoder.decode(file("x02_corrupt.mp3"))))
      assert.strictEqual(error._tag, "NoAudio")
      assert.strictEqual(error.reason, "its content is not audio or video that can be read (damaged, cut short, or another kind of file)")
    }))

  it.effect("probe reports container duration and audio presence", () =>
    Effect.gen(function*() {
      const decoder = yield* MediaDecoder
      const a01 = yield* decoder.probe(file("a01_slt_budget.wav"))
      assert.strictEqual(a01.hasAudio, true)
      assert.approximately(a01.durationSeconds ?? 0, 7.05, 0.01)
      const video = yield* decoder.probe(file("f05_podcast_video.mp4"))
      assert.strictEqual(video.hasAudio, true)
      assert.approximately(video.durationSeconds ?? 0, 8.9, 0.05)
      const x01 = yield* decoder.probe(file("x01_video_no_audio.mp4"))
      assert.strictEqual(x01.hasAudio, false)
      // Probing is container metadata only: native ffprobe trusts the .mp3 name and lists an audio
      // stream for random bytes. Decoding is what decides NoAudio.
      const x02 = yield* decoder.probe(file("x02_corrupt.mp3"))
      assert.strictEqual(x02.durationSeconds, null)
    }))

  it.effect("a long file streams in bounded chunks and stops early without hanging", () =>
    Effect.gen(function*() {
      const decoder = yield* MediaDecoder
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-media-"))
      const long = path.join(dir, "long.wav")
      const a05 = readWav(file("a05_dialogue_slt_kal.wav")).samples
      writeRepeatedWav(long, a05, 40) // ≈ 12 minutes
      const chunks = yield* Stream.runCollect(Stream.take(decoder.decode(long), 3))
      assert.strictEqual(chunks.length, 3)
      let count = 0
      let largest = 0
      yield* Stream.runForEach(decoder.decode(long), (chunk) =>
        Effect.sync(() => {
          count += chunk.length
          largest = Math.max(largest, chunk.length)
        }))
      assert.strictEqual(count, a05.length * 40)
      assert.isAtMost(largest, 2 * SAMPLE_RATE)
      fs.rmSync(dir, { recursive: true, force: true })
    }))

  it.effect("a missing file is a defect, not NoAudio", () =>
    Effect.gen(function*() {
      const decoder = yield* MediaDecoder
      const exit = yield* Effect.exit(Stream.runDrain(decoder.decode(file("does-not-exist.wav"))))
      assert.isTrue(Exit.isFailure(exit) && !Exit.hasFails(exit))
    }))
}

describe("decoder failure classification", () => {
  it("picks the line naming the input's problem, without paths", () => {
    const tail = [
      "[mp3float @ 0x55] Header missing",
      "/srv/uploads/job 1/x.mp3: Invalid data found when processing input",
      "Error configuring filter graph"
    ]
    assert.strictEqual(ffmpegReason(tail, "fallback", "/srv/uploads/job 1/x.mp3"), "Invalid data found when processing input")
    assert.strictEqual(ffmpegReason(["Error configuring filter graph"], "fallback"), "Error configuring filter graph")
    assert.strictEqual(ffmpegReason(["Aborted()", ""], "fallback"), "fallback")
  })

  it("words NoAudio alike for the native and the WASM ffmpeg's lines, quoting only an unknown line", () => {
    const noStream = "it has no audio stream (a video without sound?)"
    assert.strictEqual(noAudioReason(["Stream map '0:a:0' matches no streams."], false), noStream)
    assert.strictEqual(noAudioReason(["Output file #0 does not contain any stream"], false), noStream)
    const unreadable = noAudioReason(["/in/input: Invalid data found when processing input"], false)
    assert.strictEqual(noAudioReason(["[mp3 @ 0x1] Failed to read frame size: Could not seek to 1026."], false), unreadable)
    assert.notInclude(unreadable, "Invalid data")
    assert.strictEqual(noAudioReason([], true), "its audio stream holds no sound")
    assert.strictEqual(noAudioReason(["/srv/x.mp3: Something odd happened: error 7"], false, "/srv/x.mp3"), "it could not be decoded (ffmpeg: Something odd happened: error 7)")
    assert.strictEqual(noAudioMessage(noStream), "The file has no usable audio: it has no audio stream (a video without sound?).")
  })

  it("NoAudio when nothing decoded, DecodeFailed after partial output, nothing on success", () => {
    assert.strictEqual(decodeFailure(["Invalid data found"], 0, 16_000, false)?._tag, "NoAudio")
    assert.strictEqual(decodeFailure([], 0, 16_000, true)?._tag, "NoAudio")
    const partial = decodeFailure(["Error while decoding stream #0:0"], 32_000, 16_000, false)
    assert.strictEqual(partial?._tag, "DecodeFailed")
    assert.strictEqual(partial?._tag === "DecodeFailed" ? partial.decodedSeconds : -1, 2)
    assert.isUndefined(decodeFailure([], 16_000, 16_000, true))
  })
})

describe("MediaDecoder (wasm)", () => {
  it.layer(MediaDecoder.layer({ backend: "wasm", chunkSeconds: 2 }))((it) => {
    it.effect("resolves to the wasm backend", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* MediaDecoder).backend, "wasm")
      }))
    decoderContract(it)
  })
})

describe.runIf(nativeFfmpegRuns("MediaDecoder (native ffmpeg on PATH)"))("MediaDecoder (native ffmpeg on PATH)", () => {
  it.layer(MediaDecoder.layer({ backend: "native", chunkSeconds: 2 }))((it) => {
    it.effect("resolves to the native backend", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* MediaDecoder).backend, "native")
      }))
    decoderContract(it)
  })
})

describe("MediaDecoder (default layer)", () => {
  it.layer(Layer.fresh(MediaDecoder.layer()))((it) => {
    it.effect("picks native when on PATH, else wasm; NoAudio either way", () =>
      Effect.gen(function*() {
        const decoder = yield* MediaDecoder
        assert.strictEqual(decoder.backend, nativeFfmpegAvailable() ? "native" : "wasm")
        const error = yield* Effect.flip(Stream.runDrain(decoder.decode(file("x02_corrupt.mp3"))))
        assert.strictEqual(error._tag, "NoAudio")
      }))
  })
})
