/**
 * What crosses the boundary between the main thread and the pipeline worker, as an Effect RPC
 * group served over `node:worker_threads` (PipelineWorker.ts is the client, PipelineServer.ts the
 * server). Every payload, answer and typed error is a Schema: class instances such as
 * `TranscriptionFailed` do not survive structured cloning, so they travel encoded and are decoded
 * on the other side by the RPC layer.
 *
 * `Transcribe` is a stream: any number of `Progress` events, then one `Done` carrying the result
 * (the task engine's stall detection lives on those progress reports). `Diarize` answers once.
 * Adding an operation means one `Rpc.make` here and one handler in PipelineServer.ts.
 */
import { Schema } from "effect"
import { Rpc, RpcGroup } from "effect/rpc"
import { Transcript } from "../../src/contract/domain/Transcript.ts"
import { DiarizationFailed } from "../diarize/Diarizer.ts"
import { NoAudioInFile, TranscriptionFailed } from "../Transcriber.ts"

/**
 * The worker is gone (crash, exit, could not build its pipeline, retired while the call ran); a
 * new call gets a new worker. The worker itself sends it only when its pipeline cannot be built.
 */
export class WorkerLost extends Schema.TaggedError<WorkerLost>()("WorkerLost", {
  reason: Schema.String
}) {}

/** Transcriber.ts's `TranscribeRequest`, as it crosses to the worker. */
export const TranscribeRequest = Schema.Struct({
  path: Schema.String,
  /** `auto` or an ISO 639-1 code. */
  language: Schema.String,
  wordTimestamps: Schema.Boolean,
  /** Transcribe only the opening of the recording (keyless previews). */
  maxSeconds: Schema.optional(Schema.Finite),
  prompt: Schema.optional(Schema.String),
  task: Schema.optional(Schema.Literals(["transcribe", "translate"]))
})

/** The pipeline's configuration, as plain data: the worker's initial message. */
export const PipelineOptions = Schema.Struct({
  decoder: Schema.Literals(["auto", "wasm", "native"]),
  modelsDir: Schema.String,
  modelsUrl: Schema.String,
  model: Schema.String,
  encoder: Schema.Literals(["fp32", "q8"]),
  threads: Schema.Int,
  /** Beam width of Whisper's first pass (1 = greedy); optional for callers that predate it. */
  beamSize: Schema.optional(Schema.Int),
  /** Whisper windows decoded together (default 4); optional for callers that predate it. */
  batchSize: Schema.optional(Schema.Int),
  /** Prompt windows decoded one at a time with the text before them (default false). */
  conditionOnPreviousText: Schema.optional(Schema.Boolean),
  /** How long an unused ONNX session stays loaded. */
  idleUnloadMs: Schema.Finite,
  /** Report model downloads on stderr. */
  reportDownloads: Schema.Boolean,
  /**
   * Scheduling niceness of the worker's threads (0 = as the process; 10 = the main thread's HTTP
   * work goes first on a busy machine). Applied inside the worker only.
   */
  niceness: Schema.Int
})
export type PipelineOptions = typeof PipelineOptions.Type

export const TranscriptionResult = Schema.Struct({
  transcript: Transcript,
  durationSeconds: Schema.Finite,
  language: Schema.NullOr(Schema.String),
  speechDetected: Schema.Boolean,
  speechRatio: Schema.Finite
})

/** One event of a transcription: progress (0..100, with facts as they appear), then the result. */
export const TranscribeEvent = Schema.Union([
  Schema.TaggedStruct("Progress", { progress: Schema.Finite, durationSeconds: Schema.optional(Schema.Finite) }),
  Schema.TaggedStruct("Done", { result: TranscriptionResult })
])
export type TranscribeEvent = typeof TranscribeEvent.Type

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

export class PipelineRpcs extends RpcGroup.make(
  Rpc.make("Transcribe", {
    payload: TranscribeRequest,
    success: TranscribeEvent,
    error: Schema.Union([NoAudioInFile, TranscriptionFailed, WorkerLost]),
    stream: true
  }),
  Rpc.make("Diarize", {
    payload: DiarizeRequest,
    success: SpeakerTurns,
    error: Schema.Union([DiarizationFailed, WorkerLost])
  }),
  /**
   * Answered once at most `busy` calls still run in the worker (the caller's own live calls): the
   * client's proof that calls it interrupted have ended, and that the worker's thread is between
   * two steps of its work (an ONNX run holds the thread, so nothing is answered during one).
   */
  Rpc.make("Settle", { payload: { busy: Schema.Int } })
) {}
