/**
 * What crosses the boundary between the main thread and the pipeline worker.
 *
 * An operation is a named pair of codecs plus a typed error: its input, its success value and its
 * expected failure travel in their Schema-encoded form (plain JSON-like data: class instances such
 * as `TranscriptionFailed` do not survive structured cloning), and are decoded on the other side.
 * Adding an operation (diarization next) means one entry in `operations` and one handler in the
 * worker entry; the envelopes below do not change.
 *
 * Envelopes: the parent starts a call with `Start { id, op, input }` and may `Cancel { id }` it;
 * the worker answers with any number of `Progress` and then exactly one of `Succeeded`, `Failed`
 * (the operation's typed error), `Defect` (a bug or broken invariant in the worker, as text) or
 * `Cancelled`. `Fatal` (no id) means the worker could not build its pipeline and will exit.
 * `Exit` asks the worker to end itself (between two steps of its work, never inside one).
 */
import { Schema } from "effect"
import { Transcript } from "../../src/contract/domain/Transcript.ts"
import { NoAudioInFile, TranscriptionFailed } from "../Transcriber.ts"
import { DiarizationFailed } from "../diarize/Diarizer.ts"

export const TranscribeRequest = Schema.Struct({
  path: Schema.String,
  language: Schema.String,
  wordTimestamps: Schema.Boolean,
  maxSeconds: Schema.optional(Schema.Finite),
  prompt: Schema.optional(Schema.String),
  task: Schema.optional(Schema.Literals(["transcribe", "translate"]))
})

export const TranscriptionResult = Schema.Struct({
  transcript: Transcript,
  durationSeconds: Schema.Finite,
  language: Schema.NullOr(Schema.String),
  speechDetected: Schema.Boolean,
  speechRatio: Schema.Finite
})

/** A media file to diarize (decode, voice activity and the Diarizer all run in the worker). */
export const DiarizeRequest = Schema.Struct({
  path: Schema.String,
  maxSeconds: Schema.optional(Schema.Finite),
  /** Speaker hints (`min_speakers` / `max_speakers`), see `averageLinkage`. */
  minSpeakers: Schema.optional(Schema.Int),
  maxSpeakers: Schema.optional(Schema.Int)
})

/** Speaker turns in seconds, `SPEAKER_<nn>` in order of first appearance. */
export const SpeakerTurns = Schema.Array(Schema.Struct({
  speaker: Schema.String,
  start: Schema.Finite,
  end: Schema.Finite
}))

export interface OperationSpec {
  readonly input: Schema.Codec<unknown, unknown>
  readonly success: Schema.Codec<unknown, unknown>
  readonly error: Schema.Codec<unknown, unknown>
}

/** Every operation the worker runs. */
export const operations = {
  Transcribe: {
    input: TranscribeRequest,
    success: TranscriptionResult,
    error: Schema.Union([NoAudioInFile, TranscriptionFailed])
  },
  Diarize: {
    input: DiarizeRequest,
    success: SpeakerTurns,
    error: DiarizationFailed
  }
} as const satisfies Record<string, OperationSpec>

export type OperationName = keyof typeof operations
export type OperationInput<K extends OperationName> = (typeof operations)[K]["input"]["Type"]
export type OperationSuccess<K extends OperationName> = (typeof operations)[K]["success"]["Type"]
export type OperationError<K extends OperationName> = (typeof operations)[K]["error"]["Type"]

/** Progress facts, as `ProgressReport` takes them. */
export interface ProgressFacts {
  readonly durationSeconds?: number
}

export type ToWorker =
  | { readonly _tag: "Start"; readonly id: number; readonly op: OperationName; readonly input: unknown }
  | { readonly _tag: "Cancel"; readonly id: number }
  | { readonly _tag: "Exit" }

export type FromWorker =
  | { readonly _tag: "Progress"; readonly id: number; readonly progress: number; readonly facts: ProgressFacts }
  | { readonly _tag: "Succeeded"; readonly id: number; readonly value: unknown }
  | { readonly _tag: "Failed"; readonly id: number; readonly error: unknown }
  | { readonly _tag: "Defect"; readonly id: number; readonly message: string }
  | { readonly _tag: "Cancelled"; readonly id: number }
  | { readonly _tag: "Fatal"; readonly message: string }

/** The pipeline's configuration, as plain data (it is the worker's `workerData`). */
export interface PipelineOptions {
  readonly decoder: "auto" | "wasm" | "native"
  readonly modelsDir: string
  readonly modelsUrl: string
  readonly model: string
  readonly encoder: "fp32" | "q8"
  readonly threads: number
  /** Beam width of Whisper's first pass (1 = greedy); optional for callers that predate it. */
  readonly beamSize?: number
  /** Whisper windows decoded together (default 4); optional for callers that predate it. */
  readonly batchSize?: number
  /** Prompt windows decoded one at a time with the text before them (default false). */
  readonly conditionOnPreviousText?: boolean
  /** How long an unused ONNX session stays loaded. */
  readonly idleUnloadMs: number
  /** Report model downloads on stderr. */
  readonly reportDownloads: boolean
  /**
   * Scheduling niceness of the worker's threads (0 = as the process; 10 = the main thread's HTTP
   * work goes first on a busy machine). Applied inside the worker only.
   */
  readonly niceness: number
}

/**
 * Faults a test may inject into the worker; never set outside tests. `crash` acts the first time
 * a call on `path` reports progress: `exit` ends the worker by `process.exit(70)`, `throw` by an
 * uncaught exception, `hang` blocks the worker's thread for good (it no longer hears `Cancel`).
 */
export interface WorkerTestHooks {
  readonly crash?: { readonly path: string; readonly mode: "exit" | "throw" | "hang" }
}

export interface WorkerInput {
  readonly pipeline: PipelineOptions
  readonly testHooks?: WorkerTestHooks
}
