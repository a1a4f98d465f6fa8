/** The Job resource as the API shows it, and the vocabularies it uses. */
import { Schema } from "effect"

export const JobStatus = Schema.Literals(["queued", "processing", "done", "failed"])
export type JobStatus = typeof JobStatus.Type

export const JobSource = Schema.Literals(["upload", "url", "recording", "api"])
export type JobSource = typeof JobSource.Type

/** Why a job failed. `SOURCE_*` concern a submitted link; `NO_AUDIO` the file. */
export const JobErrorCode = Schema.Literals([
  "SERVICE_UNAVAILABLE",
  "PROCESSING_STALLED",
  "PROCESSING_TIMEOUT",
  "NO_AUDIO",
  "SOURCE_SIGN_IN_REQUIRED",
  "LIVE_STREAM_UNSUPPORTED",
  "SOURCE_PROTECTED",
  "SOURCE_TOO_LARGE",
  "SOURCE_RATE_LIMITED",
  "SOURCE_UNAVAILABLE",
  "SOURCE_UNSUPPORTED",
  "SOURCE_ACCESS_DENIED",
  "SOURCE_UNREACHABLE",
  "SERVICE_ERROR"
])
export type JobErrorCode = typeof JobErrorCode.Type

/**
 * Speaker labelling of a job submitted with `diarize=true`: `pending` until the job ends,
 * `done` when segments (and words) carry `speaker`, `failed` when diarization could not run —
 * the job is still `done`, with its transcript without speakers. Null without `diarize`, and
 * for a job that failed before diarization.
 */
export const DiarizationState = Schema.NullOr(Schema.Literals(["pending", "done", "failed"])).annotate({
  description: "`pending`, `done` or `failed` for a job submitted with diarize=true (a failed diarization still " +
    "completes the job, without speakers); null otherwise."
})
export type DiarizationState = typeof DiarizationState.Type

export const JobView = Schema.Struct({
  job_id: Schema.String,
  status: JobStatus,
  progress: Schema.Number.annotate({ description: "0..100, a best-effort hint while processing." }),
  queue_position: Schema.Int.annotate({ description: "Jobs ahead while queued; 0 otherwise." }),
  filename: Schema.NullOr(Schema.String),
  audio_duration_seconds: Schema.NullOr(Schema.Number),
  language: Schema.NullOr(Schema.String),
  source: JobSource,
  speech_detected: Schema.Boolean.annotate({ description: "Meaningful once done; false before." }),
  speech_ratio: Schema.Number,
  locked: Schema.Boolean,
  locked_code: Schema.optionalKey(Schema.Literal("transcript_locked")),
  unlock_url: Schema.optionalKey(Schema.String),
  created_at: Schema.Number,
  completed_at: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  error_code: Schema.optionalKey(JobErrorCode),
  retryable: Schema.optionalKey(Schema.Boolean),
  /** Keyless samples are previews: only the opening of the recording is transcribed. */
  preview: Schema.optionalKey(Schema.Boolean),
  diarization: DiarizationState,
  /** Only on the list of deleted jobs (`GET /v1/jobs?status=deleted`). */
  deleted_at: Schema.optionalKey(Schema.Number.annotate({
    description: "Unix seconds when the job was deleted; only in `GET /v1/jobs?status=deleted`."
  })),
  restorable_until: Schema.optionalKey(Schema.Number.annotate({
    description: "Unix seconds until which `POST /v1/jobs/{job_id}/restore` brings the job back (24 hours after " +
      "`deleted_at`); the job is purged after it. Only in `GET /v1/jobs?status=deleted`."
  }))
})
export type JobView = typeof JobView.Type

export const SubmitAnswer = Schema.Struct({
  job_id: Schema.String,
  status: JobStatus,
  claim_token: Schema.optionalKey(Schema.String.annotate({
    description: "Only for keyless submits: send it as X-Claim-Token to read the job."
  }))
})
export type SubmitAnswer = typeof SubmitAnswer.Type

export const JobList = Schema.Struct({
  jobs: Schema.Array(JobView),
  limit: Schema.Int,
  offset: Schema.Int,
  count: Schema.Int,
  total: Schema.NullOr(Schema.Int)
})
