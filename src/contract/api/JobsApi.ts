/**
 * Submitting recordings and following their jobs. Submits accept keyless callers (daily
 * samples, owned through a claim token); listing, batch status and direct uploads need an
 * account key.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { JobList, JobSource, JobStatus, JobView, SubmitAnswer } from "../domain/Job.ts"
import { Transcript, TranscriptFormat } from "../domain/Transcript.ts"
import { Language } from "../domain/Languages.ts"
import {
  BadIdempotencyKey,
  ClaimTokenRequired,
  jsonBodyErrors,
  MalformedRequest,
  pathIdErrors,
  UnsupportedContentType,
  ConcurrencyLimit,
  FileTooLarge,
  KeyMismatch,
  LinkRefusedError,
  NotFound,
  NotReady,
  PaymentRequired,
  RateLimited,
  TierForbidden,
  UnsupportedMedia,
  UploadComplete,
  UploadExpired,
  UploadIncomplete,
  ValidationFailed
} from "./Errors.ts"
import { AllowGuest, RequireAccount } from "./Security.ts"
import { responseHeaders } from "./Document.ts"

/** 5 GB: the largest file a job accepts (direct upload or multipart). */
export const maxFileBytes = 5 * 1000 ** 3
/** 10 hours: the longest recording a job accepts. */
export const maxAudioSeconds = 10 * 3600

export const JobIdParam = Schema.String.check(Schema.isUUID()).annotate({ description: "A job id (UUID)." })

export { Language } from "../domain/Languages.ts"

/** A number of speakers for diarization's hints. */
const SpeakerCount = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 20 }))

const options = {
  language: Schema.optionalKey(Language),
  diarize: Schema.optionalKey(Schema.Boolean),
  min_speakers: Schema.optionalKey(SpeakerCount.annotate({
    description: "With `diarize=true`: at least this many speakers (1..20). Without diarize, or above " +
      "`max_speakers`: 422."
  })),
  max_speakers: Schema.optionalKey(SpeakerCount.annotate({
    description: "With `diarize=true`: at most this many speakers (1..20); the closest voices are merged."
  })),
  speakers_expected: Schema.optionalKey(SpeakerCount.annotate({
    description: "With `diarize=true`: exactly this many speakers (1..20), i.e. `min_speakers` = " +
      "`max_speakers`; not together with them."
  })),
  word_timestamps: Schema.optionalKey(Schema.Boolean),
  prompt: Schema.optionalKey(Schema.String.annotate({
    description: "Names, terms and spelling the recording uses (\"Laura Bennett, Samuel Ortiz, Priya\"), up to 224 " +
      "tokens of the model's tokenizer (longer: 422). Whisper's previous-text prompt, as faster-whisper's " +
      "`initial_prompt`: given before every 30-second window (windows decoded together in a batch all get it)."
  })),
  task: Schema.optionalKey(Schema.Literals(["transcribe", "translate"]).annotate({
    description: "`transcribe` (default) or `translate`: English text from speech in any language; the job's " +
      "`language` is the detected source language. Needs a multilingual model (422 on whisper-tiny.en)."
  })),
  source: Schema.optionalKey(JobSource),
  webhook_url: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(8, 2000)).annotate({
    description: "Enterprise plan only: where `job.done` / `job.failed` events are POSTed."
  }))
}

export const SubmitOptions = Schema.Struct(options)
export type SubmitOptions = typeof SubmitOptions.Type

/**
 * What an absent submit option means, in one place: every submit path (REST, direct upload, the
 * OpenAI route, MCP) and the embeddable library apply these. `source` is not here: its default is
 * the path's own (`upload`, `url`, `api`).
 */
export const submitDefaults = {
  language: "auto",
  diarize: false,
  word_timestamps: false,
  task: "transcribe"
} as const satisfies Required<Pick<SubmitOptions, "language" | "diarize" | "word_timestamps" | "task">>

/**
 * Subtitle shaping of srt/vtt results. Without any of them a cue is one spoken phrase (the spec's
 * default); with one, phrases are cut into cues on word times, at punctuation where possible.
 */
const captionShapeQuery = {
  max_chars_per_line: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 10, maximum: 200 })).annotate({
    description: "srt/vtt only: at most this many characters per cue line (10..200; in srt the speaker label " +
      "counts toward the first line). Lines per cue default to 2."
  })),
  max_lines_per_cue: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 })).annotate({
    description: "srt/vtt only: at most this many lines per cue (1..5; lines default to 42 characters)."
  })),
  max_cue_seconds: Schema.optionalKey(Schema.Finite.check(Schema.isBetween({ minimum: 1, maximum: 30 })).annotate({
    description: "srt/vtt only: no cue longer than this many seconds (1..30)."
  }))
}

const idempotencyHeader = {
  "idempotency-key": Schema.optionalKey(Schema.String.annotate({
    description: "1..255 of `A-Z a-z 0-9 _ . : / -`. The same key with the same account within 24 hours " +
      "replays the original answer with 200 and `X-Idempotent-Replay: true` instead of creating a job."
  }))
}

/** Keyless sample jobs are read with the token their submit answer carried. */
export const claimTokenHeader = {
  "x-claim-token": Schema.optionalKey(Schema.String.annotate({
    description: "For a keyless sample job: the `claim_token` of its submit answer. Ignored with an API key."
  }))
}

const submitErrors = [
  PaymentRequired,
  BadIdempotencyKey,
  ConcurrencyLimit,
  TierForbidden,
  ValidationFailed,
  RateLimited
] as const

const Accepted = SubmitAnswer.pipe(HttpApiSchema.status(202))

/** 202 for a new job; 200 (same body) for an idempotent replay or an already-committed upload. */
const submitted = [Accepted, SubmitAnswer] as const

const replayHeader = responseHeaders({
  200: { "X-Idempotent-Replay": { description: "`true` when the answer replays an earlier request's job." } }
})

export class SubmitApi extends HttpApiGroup.make("submit")
  .add(
    HttpApiEndpoint.post("upload", "/v1/transcribe", {
      payload: Schema.Unknown.pipe(HttpApiSchema.asMultipartStream({ maxParts: 16, maxFieldSize: 64 * 1024 })),
      headers: idempotencyHeader,
      success: submitted,
      error: [...submitErrors, FileTooLarge, UnsupportedMedia, MalformedRequest, UnsupportedContentType]
    }).annotateMerge(OpenApi.annotations({
      summary: "Submit a file (multipart)",
      description: "multipart/form-data with `file` plus the shared options as fields (`language`, " +
        "`diarize`, `word_timestamps`, `prompt`, `task`, `source`, `webhook_url`). The file is streamed to storage. " +
        "200 with `X-Idempotent-Replay: true` on an idempotent replay."
    })).annotateMerge(replayHeader),
    HttpApiEndpoint.post("url", "/v1/transcribe/url", {
      payload: Schema.Struct({ url: Schema.String.check(Schema.isBetweenLength(8, 2000)), ...options }),
      headers: idempotencyHeader,
      success: submitted,
      error: [...submitErrors, LinkRefusedError, MalformedRequest, UnsupportedContentType]
    }).annotateMerge(OpenApi.annotations({
      summary: "Submit a public link",
      description: "A direct media link, a podcast episode page, or a show page / RSS feed (latest episode). " +
        "Refusals (400) queue and charge nothing."
    })).annotateMerge(replayHeader)
  )
  .middleware(AllowGuest)
  .annotateMerge(OpenApi.annotations({ title: "Submit" }))
{}

export const UploadInit = Schema.Struct({
  filename: Schema.String.check(Schema.isBetweenLength(1, 512)),
  size_bytes: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  content_type: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(128))),
  ...options
})

export const UploadTicket = Schema.Struct({
  job_id: Schema.String,
  object_key: Schema.String,
  upload_url: Schema.String,
  method: Schema.String,
  headers: Schema.Record(Schema.String, Schema.String),
  expires_in: Schema.Int,
  options: Schema.Record(Schema.String, Schema.Unknown)
})

export const UploadCommit = Schema.Struct({
  object_key: Schema.String,
  options: Schema.Record(Schema.String, Schema.Unknown),
  original_filename: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(1, 512)))
})

export class UploadsApi extends HttpApiGroup.make("uploads")
  .add(
    HttpApiEndpoint.post("init", "/v1/uploads/init", {
      payload: UploadInit,
      headers: idempotencyHeader,
      success: UploadTicket,
      error: [BadIdempotencyKey, FileTooLarge, UnsupportedMedia, TierForbidden, PaymentRequired, ...jsonBodyErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "Start a direct upload",
      description: "Returns a short-lived signed `upload_url` on this service. Send the bytes there with " +
        "`method` and `headers`, then commit."
    })).annotateMerge(replayHeader),
    HttpApiEndpoint.post("commit", "/v1/uploads/:job_id/commit", {
      params: { job_id: JobIdParam },
      payload: UploadCommit,
      success: submitted,
      error: [
        ...pathIdErrors,
        ...jsonBodyErrors,
        KeyMismatch,
        NotFound,
        UploadExpired,
        UploadIncomplete,
        ConcurrencyLimit,
        FileTooLarge,
        UnsupportedMedia,
        TierForbidden,
        PaymentRequired
      ]
    }).annotateMerge(OpenApi.annotations({
      summary: "Commit a direct upload",
      description: "Echo `object_key` and `options` from the ticket unchanged. 202 for the new job; 200 with " +
        "the existing job if it was already committed. A commit refused with 429 can be retried."
    }))
  )
  .middleware(RequireAccount)
  .annotateMerge(OpenApi.annotations({ title: "Direct upload" }))
{}

/** The ticket's `upload_url`: authorised by its signature, not by a key. */
export class UploadTransferApi extends HttpApiGroup.make("uploadTransfer")
  .add(
    HttpApiEndpoint.put("bytes", "/v1/uploads/:job_id/bytes", {
      params: { job_id: JobIdParam },
      query: { expires: Schema.String, signature: Schema.String },
      payload: HttpApiSchema.StreamUint8Array({ contentType: "application/octet-stream" }),
      success: Schema.Struct({ object_key: Schema.String, received_bytes: Schema.Int }),
      error: [...pathIdErrors, ValidationFailed, KeyMismatch, UploadExpired, UploadIncomplete, UploadComplete, FileTooLarge, NotFound]
    }).annotateMerge(OpenApi.annotations({
      summary: "Upload bytes to a ticket's signed URL",
      description: "Any content type is accepted; the body is streamed to storage."
    }))
  )
  .annotateMerge(OpenApi.annotations({ title: "Direct upload" }))
{}

export const BatchStatusItem = Schema.Struct({
  job_id: Schema.String,
  status: JobStatus,
  progress: Schema.Number,
  locked: Schema.Boolean,
  error_code: Schema.optionalKey(Schema.String)
})

export const BatchStatus = Schema.Struct({
  jobs: Schema.Array(BatchStatusItem),
  not_found: Schema.Array(Schema.String).annotate({
    description: "Ids that are not the caller's jobs (or do not exist)."
  })
})

/** The list's `status` filter: a job status, or `deleted` for the caller's restorable deleted jobs. */
export const JobListStatus = Schema.Literals([...JobStatus.literals, "deleted"]).annotate({
  description: "`queued`, `processing`, `done` or `failed` filter the live jobs; `deleted` lists the deleted " +
    "jobs that can still be restored."
})
export type JobListStatus = typeof JobListStatus.Type

export class JobListApi extends HttpApiGroup.make("jobList")
  .add(
    HttpApiEndpoint.get("list", "/v1/jobs", {
      query: {
        limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 }))),
        offset: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
        status: Schema.optionalKey(JobListStatus)
      },
      success: JobList,
      error: [ValidationFailed]
    }).annotateMerge(OpenApi.annotations({
      summary: "List the caller's jobs, newest first",
      description: "`status=deleted` lists the caller's deleted jobs that can still be restored (deleted in the last " +
        "24 hours, not purged), most recently deleted first, each with `deleted_at` and `restorable_until`; " +
        "restore one with `POST /v1/jobs/{job_id}/restore`. Other values filter the live jobs by status."
    })),
    HttpApiEndpoint.post("batchStatus", "/v1/jobs/status", {
      payload: Schema.Struct({
        ids: Schema.Array(JobIdParam).check(Schema.isBetweenLength(1, 50))
      }),
      success: BatchStatus,
      error: jsonBodyErrors
    }).annotateMerge(OpenApi.annotations({
      summary: "Status of up to 50 jobs",
      description: "Has its own budget of 600 requests per minute."
    }))
  )
  .middleware(RequireAccount)
  .annotateMerge(OpenApi.annotations({ title: "Jobs" }))
{}

const jobParams = { job_id: JobIdParam }
const jobErrors = [...pathIdErrors, NotFound, ClaimTokenRequired] as const

export class JobsApi extends HttpApiGroup.make("jobs")
  .add(
    HttpApiEndpoint.get("get", "/v1/jobs/:job_id", {
      params: jobParams,
      headers: {
        ...claimTokenHeader,
        "if-none-match": Schema.optionalKey(Schema.String.annotate({
          description: "An `ETag` this job answered before: 304 without a body while the job is unchanged."
        }))
      },
      success: [JobView, HttpApiSchema.Empty(304)],
      error: jobErrors
    }).annotateMerge(OpenApi.annotations({
      summary: "Get a job",
      description: "Strong `ETag`; send it back as `If-None-Match` for a 304 while nothing changed. " +
        "Poll every 3 seconds or slower."
    })).annotateMerge(responseHeaders({
      200: { ETag: { description: "Strong validator of this job's state." } },
      304: { ETag: { description: "The unchanged job's validator." } }
    })),
    HttpApiEndpoint.delete("remove", "/v1/jobs/:job_id", {
      params: jobParams,
      headers: claimTokenHeader,
      success: HttpApiSchema.NoContent,
      error: jobErrors
    }).annotateMerge(OpenApi.annotations({
      summary: "Cancel or delete a job",
      description: "Cancels a queued or processing job, or removes a finished one and its files. Time used is " +
        "not refunded. Reversible for 24 hours with `POST /v1/jobs/{job_id}/restore`."
    })),
    HttpApiEndpoint.get("result", "/v1/jobs/:job_id/result", {
      params: jobParams,
      query: {
        format: Schema.optionalKey(TranscriptFormat),
        ...captionShapeQuery
      },
      headers: claimTokenHeader,
      success: [
        Transcript,
        Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/plain" })),
        Schema.String.pipe(HttpApiSchema.asText({ contentType: "application/x-subrip" })),
        Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/vtt" })),
        Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({
          contentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        }))
      ],
      error: [...jobErrors, NotReady, ValidationFailed, PaymentRequired]
    }).annotateMerge(OpenApi.annotations({
      summary: "Get the transcript",
      description: "`format`: json (default), txt, srt, vtt, docx. Every format comes from the same stored " +
        "result and costs nothing extra. Per-word times (`words`) appear only in json, only when " +
        "`word_timestamps` was requested. 409 NOT_READY until the job is done. For srt and vtt, " +
        "`max_chars_per_line`, `max_lines_per_cue` and `max_cue_seconds` cut each phrase into subtitle-sized " +
        "cues (422 with any other format)."
    })),
    HttpApiEndpoint.patch("correct", "/v1/jobs/:job_id/transcript", {
      params: jobParams,
      payload: Schema.Struct({
        segments: Schema.Array(Schema.Struct({
          index: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
          text: Schema.String.check(Schema.isMaxLength(10_000))
        })).check(Schema.isBetweenLength(1, 10_000))
      }),
      headers: claimTokenHeader,
      success: Transcript,
      error: [...jobErrors, ...jsonBodyErrors, NotReady]
    }).annotateMerge(OpenApi.annotations({
      summary: "Correct transcript text",
      description: "Replaces the text of segments by index (0-based, as in the json result). Timing is " +
        "unchanged; later txt, srt, vtt and docx downloads carry the correction."
    })),
    HttpApiEndpoint.post("restore", "/v1/jobs/:job_id/restore", {
      params: jobParams,
      headers: claimTokenHeader,
      success: JobView,
      error: jobErrors
    }).annotateMerge(OpenApi.annotations({
      summary: "Restore a deleted job (within 24 hours)",
      description: "A finished job comes back as it was; a cancelled one goes back to the queue."
    }))
  )
  .middleware(AllowGuest)
  .annotateMerge(OpenApi.annotations({ title: "Jobs" }))
{}
