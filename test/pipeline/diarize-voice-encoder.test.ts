import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import { VoiceEncoder } from "../../pipeline/diarize/VoiceEncoder.ts"
import {
  dbfs,
  makeMelExtractor,
  melFilterbank,
  N_BINS,
  N_MELS,
  utterancePartials,
  volumeGain
} from "../../pipeline/diarize/VoiceFrontend.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { readWavPcm16 } from "../support/wav.ts"

/** One run of the reference pipeline on a01 (with or without Resemblyzer's webrtcvad trim). */
interface FixtureRun {
  readonly n_mel_frames: number
  readonly partial_mel_slices: Array<[number, number]>
  readonly mel_first_160: Array<Array<number>>
  readonly embedding_first_partial: Array<number>
}

interface Fixture {
  readonly mel_filterbank_40x201: Array<Array<number>>
  readonly input_rms_dbfs: number
  readonly resemblyzer_pipeline: FixtureRun & { readonly samples_after_preprocess: number }
  readonly no_vad_trim: FixtureRun & { readonly samples: number; readonly embedding_utterance: Array<number> }
}

const fixture = JSON.parse(
  fs.readFileSync(path.join(modelsDir, "fixtures/voice_encoder_reference.json"), "utf8")
) as Fixture
const a01 = readWavPcm16(path.join(mediaDir, "a01_slt_budget.wav")).samples

const maxAbsDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  assert.strictEqual(a.length, b.length)
  let max = 0
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!))
  return max
}

describe("voice encoder frontend (fixture a01)", () => {
  it("mel filterbank equals librosa's float32 Slaney matrix exactly", () => {
    const bank = melFilterbank()
    assert.strictEqual(bank.length, N_MELS * N_BINS)
    assert.strictEqual(maxAbsDiff(bank, fixture.mel_filterbank_40x201.flat()), 0)
  })

  it("input level and gain: −22.32 dBFS, no gain; quiet audio is raised to −30 dBFS, loud is left alone", () => {
    assert.approximately(dbfs(a01), fixture.input_rms_dbfs, 1e-5)
    assert.strictEqual(volumeGain(dbfs(a01)), 1)
    const quiet = a01.map((x) => x * 0.01)
    const gain = volumeGain(dbfs(quiet))
    assert.isAbove(gain, 1)
    const raised = quiet.map((x) => x * gain)
    assert.approximately(dbfs(raised), -30, 1e-6)
    assert.strictEqual(volumeGain(dbfs(new Float32Array(100))), 1)
    assert.strictEqual(dbfs(new Float32Array(100)), -Infinity)
    // Measured over chosen ranges only: speech-only level of a padded signal.
    const padded = new Float32Array(a01.length + 32_000)
    padded.set(a01, 16_000)
    assert.approximately(dbfs(padded, [[16_000, 16_000 + a01.length]]), fixture.input_rms_dbfs, 1e-5)
  })

  it("partials follow embed_utterance: slices and the dropped last window", () => {
    for (const ref of [fixture.no_vad_trim, { ...fixture.resemblyzer_pipeline, samples: fixture.resemblyzer_pipeline.samples_after_preprocess }]) {
      const { slices, paddedLength } = utterancePartials(ref.samples)
      assert.deepStrictEqual(slices.map((s) => [...s]), ref.partial_mel_slices)
      assert.isAtLeast(paddedLength, ref.samples)
    }
    // A short utterance keeps its single (partly covered) window and is padded to 1.6 s.
    assert.deepStrictEqual(utterancePartials(8000), { slices: [[0, 160]], paddedLength: 25_600 })
  })

  it("linear power mel of a01 (no trim) matches the first 160 frames to float32 precision", () => {
    const { paddedLength } = utterancePartials(a01.length)
    const padded = new Float32Array(paddedLength)
    padded.set(a01)
    const mel = makeMelExtractor().compute(padded)
    assert.strictEqual(mel.length / N_MELS, fixture.no_vad_trim.n_mel_frames)
    const expected = fixture.no_vad_trim.mel_first_160.flat()
    for (let i = 0; i < expected.length; i++) {
      assert.approximately(mel[i]!, expected[i]!, 1e-6 * Math.max(1, Math.abs(expected[i]!)), `mel[${i}]`)
    }
  })

  it("compute(samples, from, to) equals the mel of the copied range", () => {
    const extractor = makeMelExtractor()
    const a = extractor.compute(a01, 16_000, 40_000, 2)
    const b = extractor.compute(a01.slice(16_000, 40_000).map((x) => Math.fround(x * 2)))
    assert.strictEqual(maxAbsDiff(a, b), 0)
  })
})

const onnx = OnnxRuntime.layer({ threads: 2, idleUnloadMs: 5_000 })

describe("VoiceEncoder on onnxruntime", () => {
  it.layer(VoiceEncoder.layer({ modelsDir }).pipe(Layer.provide(onnx)))((it) => {
    it.effect("the fixture's first partial mel gives the stored embedding bit for bit", () =>
      Effect.gen(function*() {
        const encoder = yield* VoiceEncoder
        const [embedding] = yield* Effect.scoped(encoder.embed([{
          frames: 160,
          data: Float32Array.from(fixture.resemblyzer_pipeline.mel_first_160.flat())
        }]))
        assert.deepStrictEqual([...embedding!], fixture.resemblyzer_pipeline.embedding_first_partial)
      }))

    it.effect("a01 without trim: first partial and utterance embedding match the fixture", () =>
      Effect.gen(function*() {
        const encoder = yield* VoiceEncoder
        const utterance = yield* Effect.scoped(encoder.embedUtterance(a01))
        assert.isBelow(maxAbsDiff(utterance, fixture.no_vad_trim.embedding_utterance), 1e-5)
        const mel = makeMelExtractor().compute(a01)
        const [first] = yield* Effect.scoped(encoder.embed([{ frames: 160, data: mel.subarray(0, 160 * N_MELS) }]))
        assert.isBelow(maxAbsDiff(first!, fixture.no_vad_trim.embedding_first_partial), 1e-5)
      }))

    it.effect("windows of mixed lengths come back in input order, batched or not", () =>
      Effect.gen(function*() {
        const encoder = yield* VoiceEncoder
        const mel = makeMelExtractor().compute(a01)
        const windows = [[0, 150], [75, 175], [100, 250], [300, 360]].map(([from, to]) => ({
          frames: to! - from!,
          data: mel.subarray(from! * N_MELS, to! * N_MELS)
        }))
        const together = yield* Effect.scoped(encoder.embed(windows))
        for (let i = 0; i < windows.length; i++) {
          const [alone] = yield* Effect.scoped(encoder.embed([windows[i]!]))
          assert.isBelow(maxAbsDiff(together[i]!, alone!), 1e-5, `window ${i}`)
        }
        assert.deepStrictEqual(yield* Effect.scoped(encoder.embed([])), [])
      }))
  })

  it.layer(VoiceEncoder.layer({ modelsDir: "/nonexistent/models" }).pipe(Layer.provide(onnx)))((it) => {
    it.effect("a missing model file is a VoiceEncoderMissing error naming the path", () =>
      Effect.gen(function*() {
        const encoder = yield* VoiceEncoder
        const error = yield* Effect.flip(Effect.scoped(encoder.embed([{ frames: 10, data: new Float32Array(400) }])))
        assert.strictEqual(error._tag, "VoiceEncoderMissing")
        assert.include(error._tag === "VoiceEncoderMissing" ? error.path : "", "/nonexistent/models/voice-encoder/onnx/voice_encoder.onnx")
      }))
  })
})
