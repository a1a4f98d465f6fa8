/**
 * The speech pipeline as one call: media file → stored transcript. Decode (streamed) →
 * voice activity → ≤30 s windows of speech → Whisper → phrases mapped back to source time.
 * The job runner calls this; the CLI `verbatim transcribe` calls it too.
 */
import { Context, type Effect, Schema } from "effect"
import type { Transcript } from "../src/contract/domain/Transcript.ts"

export interface TranscribeRequest {
  readonly path: string
  /** `auto` or an ISO 639-1 code. */
  readonly language: string
  readonly wordTimestamps: boolean
  /** Transcribe only the opening of the recording (keyless previews). */
  readonly maxSeconds?: number | undefined
  /** Names, terms and spelling for the model (Whisper's previous-text prompt; see `TranscribeOptions.prompt`). */
  readonly prompt?: string | undefined
  /** `translate`: English text from speech in any language (multilingual model); default `transcribe`. */
  readonly task?: "transcribe" | "translate" | undefined
}

export interface TranscriptionResult {
  readonly transcript: Transcript
  readonly durationSeconds: number
  readonly language: string | null
  readonly speechDetected: boolean
  readonly speechRatio: number
}

/** Progress 0..100 through decode, voice activity and recognition, plus facts as they appear. */
export type ProgressReport = (progress: number, facts: { readonly durationSeconds?: number }) => Effect.Effect<void>

/** The file holds no audio stream, or nothing in it decodes. */
export class NoAudioInFile extends Schema.TaggedError<NoAudioInFile>()("NoAudioInFile", {
  reason: Schema.String
}) {}

/**
 * The pipeline broke on a file that has audio. `kind` says whose the failure is, so the job can
 * say whether another run of the same request could get past it: `media`, the file's own audio
 * stopped the decoder part-way (a truncated or corrupt file: it would again); `language`, the
 * model cannot transcribe the requested language; `engine`, the runtime failed (the model would
 * not load, onnxruntime failed, the worker was lost), which is not the file's doing.
 */
export class TranscriptionFailed extends Schema.TaggedError<TranscriptionFailed>()("TranscriptionFailed", {
  reason: Schema.String,
  kind: Schema.Literals(["media", "language", "engine"])
}) {}

export class Transcriber extends Context.Service<Transcriber, {
  transcribe(
    request: TranscribeRequest,
    onProgress: ProgressReport
  ): Effect.Effect<TranscriptionResult, NoAudioInFile | TranscriptionFailed>
}>()("verbatim/pipeline/Transcriber") {}
