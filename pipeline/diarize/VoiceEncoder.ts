/**
 * The speaker embedder: Resemblyzer's GE2E voice encoder (3-layer LSTM → Linear → ReLU → L2)
 * as `voice-encoder/onnx/voice_encoder.onnx` on onnxruntime, input `mels` [batch, frames, 40]
 * (linear power mel from VoiceFrontend), output `embedding` [batch, 256], L2-normalised.
 *
 * `embed` runs windows of equal length together (one graph run per length and batch), so a
 * caller that cuts its speech into fixed windows pays one run per `batchSize` windows.
 * `embedUtterance` is Resemblyzer's `embed_utterance` (partials of 1.6 s, mean, re-normalised),
 * kept for the number-for-number check against the fixture and for whole-utterance use.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import { type OnnxLoadError, OnnxRuntime, type OnnxRunError, type OnnxSession, Tensor } from "../onnx/OnnxRuntime.ts"
import { makeMelExtractor, N_MELS, utterancePartials } from "./VoiceFrontend.ts"

export const VOICE_ENCODER_FILE = "voice-encoder/onnx/voice_encoder.onnx"
export const EMBEDDING_SIZE = 256

export class VoiceEncoderMissing extends Schema.TaggedError<VoiceEncoderMissing>()("VoiceEncoderMissing", {
  path: Schema.String
}) {}

export type VoiceEncoderError = VoiceEncoderMissing | OnnxLoadError | OnnxRunError

export interface VoiceEncoderOptions {
  /** Folder holding `voice-encoder/`; default `../shared/models` from the working directory. */
  readonly modelsDir?: string
  /** Windows per graph run (default 32). */
  readonly batchSize?: number
  /** Intra-op threads of the session; default the OnnxRuntime layer's. */
  readonly threads?: number
}

/** A mel window: `frames` rows of 40 values, row-major. */
export interface MelWindow {
  readonly frames: number
  readonly data: Float32Array
}

export class VoiceEncoder extends Context.Service<VoiceEncoder, {
  /** One L2-normalised 256-d embedding per window, in input order. */
  readonly embed: (windows: ReadonlyArray<MelWindow>) => Effect.Effect<Array<Float32Array>, VoiceEncoderError, Scope.Scope>
  /** Resemblyzer `embed_utterance` of 16 kHz samples already volume-normalised. */
  readonly embedUtterance: (samples: Float32Array) => Effect.Effect<Float32Array, VoiceEncoderError, Scope.Scope>
}>()("verbatim/pipeline/VoiceEncoder") {
  static readonly layer = (options: VoiceEncoderOptions = {}) =>
    Layer.effect(
      VoiceEncoder,
      Effect.gen(function*() {
        const onnx = yield* OnnxRuntime
        const file = path.resolve(options.modelsDir ?? "../shared/models", VOICE_ENCODER_FILE)
        const batchSize = Math.max(1, options.batchSize ?? 32)
        const mel = makeMelExtractor()

        const session: Effect.Effect<OnnxSession, VoiceEncoderError, Scope.Scope> = Effect.suspend(
          (): Effect.Effect<OnnxSession, VoiceEncoderError, Scope.Scope> =>
            fs.existsSync(file)
              ? onnx.session(file, options.threads === undefined ? {} : { threads: options.threads })
              : Effect.fail(new VoiceEncoderMissing({ path: file }))
        )

        const embed = Effect.fn("VoiceEncoder.embed")(function*(windows: ReadonlyArray<MelWindow>) {
          const out = new Array<Float32Array>(windows.length)
          if (windows.length === 0) return out
          const encoder = yield* session
          const byLength = new Map<number, Array<number>>()
          windows.forEach((w, i) => {
            const group = byLength.get(w.frames)
            if (group) group.push(i)
            else byLength.set(w.frames, [i])
          })
          for (const [frames, indices] of byLength) {
            for (let at = 0; at < indices.length; at += batchSize) {
              const batch = indices.slice(at, at + batchSize)
              const input = new Float32Array(batch.length * frames * N_MELS)
              batch.forEach((index, b) => input.set(windows[index]!.data, b * frames * N_MELS))
              const result = yield* encoder.run({ mels: new Tensor("float32", input, [batch.length, frames, N_MELS]) }, ["embedding"])
              const data = result["embedding"]!.data as Float32Array
              batch.forEach((index, b) => {
                out[index] = data.slice(b * EMBEDDING_SIZE, (b + 1) * EMBEDDING_SIZE)
              })
            }
          }
          return out
        })

        const embedUtterance = Effect.fn("VoiceEncoder.embedUtterance")(function*(samples: Float32Array) {
          const { slices, paddedLength } = utterancePartials(samples.length)
          const padded = new Float32Array(paddedLength)
          padded.set(samples)
          const spectrogram = mel.compute(padded)
          const partials = yield* embed(slices.map(([from, to]) => ({
            frames: to - from,
            data: spectrogram.subarray(from * N_MELS, to * N_MELS)
          })))
          return normalize(meanOf(partials))
        })

        return VoiceEncoder.of({ embed, embedUtterance })
      })
    )
}

export const meanOf = (vectors: ReadonlyArray<Float32Array>): Float32Array => {
  const mean = new Float32Array(vectors[0]?.length ?? EMBEDDING_SIZE)
  for (const v of vectors) for (let i = 0; i < mean.length; i++) mean[i] = mean[i]! + v[i]! / vectors.length
  return mean
}

/** L2-normalised copy; a zero vector stays zero. */
export const normalize = (v: Float32Array): Float32Array => {
  let norm = 0
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!
  norm = Math.sqrt(norm)
  return norm === 0 ? v.slice() : v.map((x) => x / norm)
}
