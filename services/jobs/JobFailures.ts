/**
 * Every way the job runner itself ends a job `failed`: the `error_code`, the sentence and
 * `retryable` the client sees. `retryable` is the spec's "resubmitting the same request can
 * succeed", so it is true only for failures that are not the request's doing — the runtime,
 * storage or a wedged process — and false where the same file, language or link would end the
 * same way (issue 22: a language the model cannot transcribe said `retryable: true`).
 *
 * Link downloads decide their own (`SourceFailed.retryable`, services/links/LinkResolver.ts:
 * a 429, a 5xx, an unreachable or broken source can recover; 401/403, 404, 451, too large, empty
 * or not media cannot), tested in test/services/links-resolver.test.ts; the job copies them.
 */
import { noAudioMessage } from "../../pipeline/media/DecodeErrors.ts"
import type { TranscriptionFailed } from "../../pipeline/Transcriber.ts"
import type { GiveUpReason } from "../work/TaskKind.ts"
import type { Failure } from "./JobRuns.ts"

/** Failures of one run, by cause; `reason` is the pipeline's own words where it has some. */
export type RunFailureKind =
  /** The file has no audio stream, or nothing in it decodes. */
  | "noAudio"
  /** The file's audio stops the decoder part-way (truncated or corrupt). */
  | "brokenMedia"
  /** The model cannot transcribe the requested language (submits check it; the model changed since). */
  | "unsupportedLanguage"
  /** The speech runtime failed: the model would not load, onnxruntime failed, the worker was lost. */
  | "engine"
  /** The job's stored upload is gone from storage. */
  | "mediaMissing"
  /** The job row has neither a file nor a link (never made by a submit). */
  | "noInput"
  /** A defect while running: a bug or a failing dependency, not the request. */
  | "unexpected"
  /** A diarize run found no stored transcript to label. */
  | "transcriptMissing"

/** The pipeline's `TranscriptionFailed.kind` (whose failure it is) as the run failure it becomes. */
export const pipelineFailureKind = {
  media: "brokenMedia",
  language: "unsupportedLanguage",
  engine: "engine"
} as const satisfies Record<TranscriptionFailed["kind"], RunFailureKind>

export const runFailure = (kind: RunFailureKind, reason = ""): Failure => {
  switch (kind) {
    case "noAudio":
      return { code: "NO_AUDIO", error: noAudioMessage(reason), retryable: false }
    case "brokenMedia":
      return {
        code: "SERVICE_ERROR",
        error: `The file's audio could not be decoded to its end (${reason}); the same file fails the same way: ` +
          "re-encode it or send an intact copy.",
        retryable: false
      }
    case "unsupportedLanguage":
      return {
        code: "SERVICE_ERROR",
        error: "The configured model cannot transcribe the requested language; submit again with a language it takes " +
          "(or `auto`).",
        retryable: false
      }
    case "engine":
      return {
        code: "SERVICE_ERROR",
        error: `Transcription failed: ${reason}; resubmitting the same request can succeed.`,
        retryable: true
      }
    case "mediaMissing":
      return {
        code: "SERVICE_ERROR",
        error: "The uploaded file is missing from storage; uploading it again can succeed.",
        retryable: true
      }
    case "noInput":
      return { code: "SERVICE_ERROR", error: "The job has neither a file nor a link; resubmitting can succeed.", retryable: true }
    case "unexpected":
      return { code: "SERVICE_ERROR", error: "The service failed while transcribing; retrying can succeed.", retryable: true }
    case "transcriptMissing":
      return {
        code: "SERVICE_ERROR",
        error: "The transcript to label with speakers was not stored; resubmitting can succeed.",
        retryable: true
      }
  }
}

/**
 * When the task engine gives a transcription up. `exhausted` means every attempt ended with the
 * process killed under it (out of memory, a native crash): the same recording does it again.
 * `timeout` is the job's total time limit (VERBATIM_JOB_TIMEOUT_SECONDS): the same recording
 * needs as long again. `stalled` is a run that stopped reporting progress — a frozen process or
 * machine, not the request — so a new run can finish.
 */
export const givenUpFailure: Record<GiveUpReason, Failure> = {
  exhausted: {
    code: "SERVICE_ERROR",
    error: "Transcription stopped the service on every attempt (out of memory or a crash); the same recording " +
      "would do it again: split it, or ask the operator for more memory.",
    retryable: false
  },
  stalled: {
    code: "PROCESSING_STALLED",
    error: "Processing stopped making progress; resubmitting the same request can succeed.",
    retryable: true
  },
  timeout: {
    code: "PROCESSING_TIMEOUT",
    error: "Processing took longer than the time this service allows a job; the same recording would too: split it " +
      "into shorter parts.",
    retryable: false
  }
}
