import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as path from "node:path"
import { MediaDecoder } from "../../pipeline/media/MediaDecoder.ts"
import { VoiceActivity } from "../../pipeline/vad/VoiceActivity.ts"
import { readWavPcm16 } from "../support/wav.ts"

const media = path.resolve(import.meta.dirname, "../../../shared/media")
const file = (name: string) => path.join(media, name)

/** "v6 segments" column of shared/models/README.md (share of the file covered by segments). */
const v6Segments: Record<string, number> = {
  "a01_slt_budget.wav": 0.926,
  "a02_kal_weather.wav": 0.905,
  "a03_espeak_library.wav": 0.924,
  "a04_ked_podcast.wav": 0.884,
  "a05_dialogue_slt_kal.wav": 0.809,
  "a06_padded_budget.wav": 0.495,
  "a07_noisy_weather.wav": 0.9,
  "f01_library.mp3": 0.92,
  "f02_library.m4a": 0.926,
  "f03_library.ogg": 0.929,
  "f04_library.flac": 0.924,
  "f05_podcast_video.mp4": 0.879
}

/** Splits samples into chunks of varying odd sizes, to exercise state across chunk boundaries. */
const oddChunks = (samples: Float32Array) => {
  const chunks: Array<Float32Array> = []
  const sizes = [1, 511, 513, 7000, 333, 16000, 4097]
  let at = 0
  for (let k = 0; at < samples.length; k++) {
    const n = sizes[k % sizes.length]!
    chunks.push(samples.slice(at, at + n))
    at += n
  }
  return Stream.fromIterable(chunks)
}

const layers = Layer.mergeAll(VoiceActivity.layer(), MediaDecoder.layer({ backend: "wasm" }))

describe("VoiceActivity", () => {
  it.layer(layers)((it) => {
    it.effect("speech files: speech ratio within 0.03 of upstream v6 segments", () =>
      Effect.gen(function*() {
        const vad = yield* VoiceActivity
        const decoder = yield* MediaDecoder
        for (const [name, expected] of Object.entries(v6Segments)) {
          const summary = yield* vad.detect(decoder.decode(file(name)))
          assert.isTrue(summary.speechDetected, name)
          assert.approximately(summary.speechRatio, expected, 0.03, name)
          const covered = summary.regions.reduce((s, r) => s + r.end - r.start, 0)
          assert.approximately(covered / summary.duration, summary.speechRatio, 0.002, name)
          for (let i = 1; i < summary.regions.length; i++) {
            assert.isAtLeast(summary.regions[i]!.start, summary.regions[i - 1]!.end, name)
          }
        }
      }))

    it.effect("n01/n02/n03 (silence, noise, music): no region, speechDetected false", () =>
      Effect.gen(function*() {
        const vad = yield* VoiceActivity
        const decoder = yield* MediaDecoder
        for (const name of ["n01_silence.wav", "n02_noise.wav", "n03_music.wav"]) {
          const summary = yield* vad.detect(decoder.decode(file(name)))
          assert.strictEqual(summary.speechDetected, false, name)
          assert.deepStrictEqual(summary.regions, [], name)
          assert.strictEqual(summary.speechRatio, 0, name)
          assert.isAbove(summary.duration, 4, name)
        }
      }))

    it.effect("a06: speech starts after the 3 s of leading silence", () =>
      Effect.gen(function*() {
        const vad = yield* VoiceActivity
        const summary = yield* vad.detect(Stream.succeed(readWavPcm16(file("a06_padded_budget.wav")).samples))
        assert.approximately(summary.regions[0]!.start, 3.0, 0.35)
        assert.isBelow(summary.regions[summary.regions.length - 1]!.end, 13.05 - 2.5)
      }))

    it.effect("chunking does not matter: odd chunk sizes give the same regions as one chunk", () =>
      Effect.gen(function*() {
        const vad = yield* VoiceActivity
        const samples = readWavPcm16(file("a05_dialogue_slt_kal.wav")).samples
        const whole = yield* vad.detect(Stream.succeed(samples))
        const odd = yield* vad.detect(oddChunks(samples))
        assert.deepStrictEqual(odd, whole)
        assert.isAtLeast(whole.regions.length, 3)
        assert.approximately(whole.duration, 18.2, 0.01)
      }))

    it.effect("region events carry exactly their source samples", () =>
      Effect.gen(function*() {
        const vad = yield* VoiceActivity
        const samples = readWavPcm16(file("a05_dialogue_slt_kal.wav")).samples
        const events = yield* Stream.runCollect(vad.events(oddChunks(samples)))
        const regions = events.flatMap((e) => (e._tag === "Region" ? [e.region] : []))
        assert.strictEqual(events[events.length - 1]!._tag, "Done")
        assert.isAbove(regions.length, 0)
        for (const r of regions) {
          assert.strictEqual(r.samples.length, r.endSample - r.startSample)
          assert.deepStrictEqual(r.samples, samples.slice(r.startSample, r.endSample))
          assert.strictEqual(r.probs.length, Math.ceil(r.endSample / 512) - r.firstFrame)
        }
      }))
  })
})
