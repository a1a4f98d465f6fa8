/**
 * Diarization on the real voice encoder, real VAD regions and the shared media.
 *
 * DER (test/support/der.ts) is scored with a 0.25 s collar around reference turn boundaries:
 * the references are turn-level (a08: the manifest's start/end per turn, which include the
 * pauses inside a turn; a05: the manifest has no times, so its turns are the ones measured in
 * shared/models/README.md, "Diarization of a05": 0.23–5.09 A, 6.02–11.90 B, 13.15–18.20 A).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DiarizationFailed, Diarizer } from "../../pipeline/diarize/Diarizer.ts"
import { diarizeAudio } from "../support/diarize.ts"
import { MediaDecoder } from "../../pipeline/media/MediaDecoder.ts"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import { VoiceActivity } from "../../pipeline/vad/VoiceActivity.ts"
import { diarizationErrorRate, type Turn } from "../support/der.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { readWavPcm16 } from "../support/wav.ts"

interface ManifestEntry {
  readonly kind: string
  readonly turns?: ReadonlyArray<{ readonly speaker: string; readonly start?: number; readonly end?: number }>
}
const manifest = JSON.parse(fs.readFileSync(path.join(mediaDir, "manifest.json"), "utf8")) as Record<string, ManifestEntry>

const a05Reference: Array<Turn> = [
  { speaker: "A", start: 0.23, end: 5.09 },
  { speaker: "B", start: 6.02, end: 11.9 },
  { speaker: "A", start: 13.15, end: 18.2 }
]
const a08Reference: Array<Turn> = manifest["a08_interview_three_speakers.wav"]!.turns!.map((t) => ({
  speaker: t.speaker,
  start: t.start!,
  end: t.end!
}))

const onnx = OnnxRuntime.layer({ threads: 2, idleUnloadMs: 10_000 })
const layers = Layer.mergeAll(
  Diarizer.layer({ modelsDir }),
  VoiceActivity.layer(),
  MediaDecoder.layer({ backend: "wasm" })
).pipe(Layer.provide(onnx))

/** PCM of a shared media file: wav read directly, other formats through the decoder. */
const pcmOf = (name: string) =>
  Effect.gen(function*() {
    if (name.endsWith(".wav")) return readWavPcm16(path.join(mediaDir, name)).samples
    const decoder = yield* MediaDecoder
    const chunks = yield* Stream.runCollect(decoder.decode(path.join(mediaDir, name)))
    return Float32Array.from(chunks.flatMap((c) => Array.from(c)))
  })

const diarizeFile = (name: string) =>
  Effect.gen(function*() {
    const pcm = yield* pcmOf(name)
    const vad = yield* VoiceActivity
    const summary = yield* vad.detect(Stream.make(pcm))
    const turns = yield* diarizeAudio(pcm, summary.regions)
    return { turns, speakers: new Set(turns.map((t) => t.speaker)) }
  })

const assertWellFormed = (turns: ReadonlyArray<{ speaker: string; start: number; end: number }>) => {
  const order: Array<string> = []
  for (const t of turns) if (!order.includes(t.speaker)) order.push(t.speaker)
  assert.deepStrictEqual(order, order.map((_, i) => `SPEAKER_${String(i).padStart(2, "0")}`))
  for (let i = 0; i < turns.length; i++) {
    assert.isBelow(turns[i]!.start, turns[i]!.end)
    if (i > 0) assert.isAtLeast(turns[i]!.start, turns[i - 1]!.end)
  }
}

describe("Diarizer on shared/media", () => {
  it.layer(layers, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("a05 (two voices, three turns): 2 speakers, DER ≤ 10 %", () =>
      Effect.gen(function*() {
        const { turns, speakers } = yield* diarizeFile("a05_dialogue_slt_kal.wav")
        assertWellFormed(turns)
        assert.strictEqual(speakers.size, 2, JSON.stringify(turns))
        const der = diarizationErrorRate(a05Reference, turns, 0.25)
        assert.isAtMost(der.der, 0.1, JSON.stringify({ der, turns }))
        assert.deepStrictEqual(turns.map((t) => t.speaker), ["SPEAKER_00", "SPEAKER_01", "SPEAKER_00"])
      }))

    it.effect("a08 (three voices, nine turns): 3 speakers, DER ≤ 10 %", () =>
      Effect.gen(function*() {
        const { turns, speakers } = yield* diarizeFile("a08_interview_three_speakers.wav")
        assertWellFormed(turns)
        assert.strictEqual(speakers.size, 3, JSON.stringify(turns))
        const der = diarizationErrorRate(a08Reference, turns, 0.25)
        assert.isAtMost(der.der, 0.1, JSON.stringify({ der, turns }))
        // The host (A) speaks first, so she is SPEAKER_00; the caller (C) is the third voice.
        assert.strictEqual(der.mapping.get("SPEAKER_00"), "A")
        assert.strictEqual(der.mapping.get("SPEAKER_02"), "C")
      }))

    it.effect("every single-voice speech file: exactly 1 speaker", () =>
      Effect.gen(function*() {
        const singles = Object.entries(manifest)
          .filter(([name, e]) => e.kind === "speech" && /^(a0[1-7]|f01)_/.test(name))
          .map(([name]) => name)
        assert.deepStrictEqual(singles.sort(), [
          "a01_slt_budget.wav", "a02_kal_weather.wav", "a03_espeak_library.wav", "a04_ked_podcast.wav",
          "a06_padded_budget.wav", "a07_noisy_weather.wav", "f01_library.mp3"
        ])
        for (const name of singles) {
          const { turns, speakers } = yield* diarizeFile(name)
          assertWellFormed(turns)
          assert.strictEqual(speakers.size, 1, `${name}: ${JSON.stringify(turns)}`)
        }
      }))

    it.effect("no speech regions, or only regions too short for a window: no turns", () =>
      Effect.gen(function*() {
        const pcm = new Float32Array(16_000 * 3)
        assert.deepStrictEqual(yield* diarizeAudio(pcm, []), [])
        assert.deepStrictEqual(yield* diarizeAudio(pcm, [{ start: 1, end: 1.3 }]), [])
        // Regions beyond the audio are clipped away.
        assert.deepStrictEqual(yield* diarizeAudio(pcm, [{ start: 5, end: 9 }]), [])
      }))
  })

  it.layer(Layer.mergeAll(Diarizer.layer({ modelsDir, threshold: 0.8 }), VoiceActivity.layer()).pipe(Layer.provide(onnx)), { excludeTestServices: true })((it) => {
    it.effect("the threshold decides the count: at cosine 0.8 the three voices of a08 split into more speakers", () =>
      Effect.gen(function*() {
        const pcm = readWavPcm16(path.join(mediaDir, "a08_interview_three_speakers.wav")).samples
        const summary = yield* (yield* VoiceActivity).detect(Stream.make(pcm))
        const turns = yield* diarizeAudio(pcm, summary.regions)
        assert.isAbove(new Set(turns.map((t) => t.speaker)).size, 3)
      }))
  })

  it.layer(Diarizer.layer({ modelsDir: "/nonexistent/models" }).pipe(Layer.provide(onnx)))((it) => {
    it.effect("a missing voice-encoder model is DiarizationFailed, with the path in the reason", () =>
      Effect.gen(function*() {
        const pcm = readWavPcm16(path.join(mediaDir, "a01_slt_budget.wav")).samples
        const error = yield* Effect.flip(diarizeAudio(pcm, [{ start: 0.2, end: 7 }]))
        assert.instanceOf(error, DiarizationFailed)
        assert.include(error.reason, "/nonexistent/models/voice-encoder/onnx/voice_encoder.onnx")
      }))
  })

  const corrupt = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-diarize-"))
  fs.mkdirSync(path.join(corrupt, "voice-encoder/onnx"), { recursive: true })
  fs.writeFileSync(path.join(corrupt, "voice-encoder/onnx/voice_encoder.onnx"), "not an onnx graph")
  afterAll(() => fs.rmSync(corrupt, { recursive: true, force: true }))

  it.layer(Diarizer.layer({ modelsDir: corrupt }).pipe(Layer.provide(onnx)))((it) => {
    it.effect("a model file onnxruntime cannot load is DiarizationFailed too", () =>
      Effect.gen(function*() {
        const pcm = readWavPcm16(path.join(mediaDir, "a01_slt_budget.wav")).samples
        const error = yield* Effect.flip(diarizeAudio(pcm, [{ start: 0.2, end: 7 }]))
        assert.instanceOf(error, DiarizationFailed)
        assert.match(error.reason, /^voice encoder: /)
      }))
  })
})
