/**
 * The runner's side of a job: claim, heartbeat, attach downloaded media, hand on to a
 * follow-up task, complete, fail. Every write after the claim is guarded by the claim's
 * run token, so a job ends `done` or `failed` exactly once even if a stale run wakes up
 * (the task engine delivers at least once; the token makes the effect exactly once).
 * Completion stores the transcript, charges (or locks) and appends the `finished` job
 * event in one transaction; failing appends `finished` the same way.
 *
 * Chaining: a run whose job needs more work (diarization) calls `handOff` instead of
 * `complete`: the transcript and the audio facts are stored, the job stays `processing`,
 * and a task of the follow-up kind is stored in the same transaction (the caller sends
 * its message after). The follow-up claims the job like any run, reads what was stored
 * with `staged`, and ends the job with `complete` (or `fail`).
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import type { JobErrorCode } from "../../src/contract/domain/Job.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { Billing } from "../billing/Billing.ts"
import { JobEventLog } from "../work/JobEventLog.ts"
import type { TaskKind } from "../work/TaskKind.ts"
import { TaskStore } from "../work/TaskStore.ts"
import { decodeJobRows, type JobRecord } from "./JobRecord.ts"
import { TranscriptStore } from "./TranscriptStore.ts"

export interface Outcome {
  readonly transcript: Transcript
  readonly audioDurationSeconds: number
  readonly language: string | null
  readonly speechDetected: boolean
  readonly speechRatio: number
  /** How diarization ended, for a job that asked for it (stored with the completion). */
  readonly diarization?: "done" | "failed" | undefined
}

export interface Failure {
  readonly error: string
  readonly code: JobErrorCode
  readonly retryable: boolean
}

export class JobRuns extends Context.Service<JobRuns, {
  /** Takes the job for one run; None when it ended, was deleted, or does not exist. */
  claim(id: JobId): Effect.Effect<Option.Option<{ readonly job: JobRecord; readonly token: string }>>
  /** Records progress; false once the run lost the job (deleted, ended, or claimed by a newer run). */
  heartbeat(id: JobId, token: string, progress: number, facts?: { readonly audioDurationSeconds?: number }): Effect.Effect<boolean>
  /** A link job's media, once downloaded, becomes the job's stored object. */
  attachMedia(id: JobId, token: string, media: { readonly objectKey: string; readonly sizeBytes: number; readonly contentType: string | null; readonly mediaType: string }): Effect.Effect<boolean>
  /** Stores the outcome so far and a `next` task for the job; Some(task id) unless the run lost the job. */
  handOff(id: JobId, token: string, outcome: Outcome, next: TaskKind): Effect.Effect<Option.Option<string>>
  /** What `handOff` stored, for the follow-up run. */
  staged(id: JobId): Effect.Effect<Option.Option<Outcome>>
  complete(id: JobId, token: string, outcome: Outcome): Effect.Effect<Option.Option<JobRecord>>
  /** `token` null: whatever run holds the job (the engine giving a task up). */
  fail(id: JobId, token: string | null, failure: Failure): Effect.Effect<Option.Option<JobRecord>>
}>()("verbatim/jobs/JobRuns") {
  static readonly layer = Layer.effect(
    JobRuns,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const billing = yield* Billing
      const log = yield* JobEventLog
      const transcripts = yield* TranscriptStore
      const tasks = yield* TaskStore
      const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
      const one = (rows: ReadonlyArray<unknown>) => Effect.map(decodeJobRows(rows), (jobs) => Option.fromNullishOr(jobs[0]))

      const claim = Effect.fn("JobRuns.claim")(function*(id: JobId) {
        const at = yield* now
        const token = crypto.randomUUID()
        const rows = yield* sql`UPDATE jobs SET status = 'processing', attempts = attempts + 1, run_token = ${token},
            started_at = COALESCE(started_at, ${at}), heartbeat_at = ${at}, progress = 0
          WHERE id = ${id} AND status IN ('queued', 'processing') AND deleted_at IS NULL
          RETURNING *`.pipe(Effect.orDie)
        return Option.map(yield* one(rows), (job) => ({ job, token }))
      })

      const heartbeat = Effect.fn("JobRuns.heartbeat")(function*(
        id: JobId,
        token: string,
        progress: number,
        facts: { readonly audioDurationSeconds?: number } = {}
      ) {
        const at = yield* now
        const duration = facts.audioDurationSeconds ?? null
        const rows = yield* sql`UPDATE jobs SET heartbeat_at = ${at}, progress = GREATEST(progress, ${progress}),
            audio_duration_seconds = COALESCE(${duration}::double precision, audio_duration_seconds)
          WHERE id = ${id} AND run_token = ${token} AND status = 'processing' AND deleted_at IS NULL
          RETURNING id`.pipe(Effect.orDie)
        return rows.length > 0
      })

      const attachMedia = Effect.fn("JobRuns.attachMedia")(function*(
        id: JobId,
        token: string,
        media: { readonly objectKey: string; readonly sizeBytes: number; readonly contentType: string | null; readonly mediaType: string }
      ) {
        const rows = yield* sql`UPDATE jobs SET object_key = ${media.objectKey}, size_bytes = ${media.sizeBytes},
            content_type = COALESCE(${media.contentType}, content_type), media_type = ${media.mediaType}
          WHERE id = ${id} AND run_token = ${token} RETURNING id`.pipe(Effect.orDie)
        return rows.length > 0
      })

      const handOff = Effect.fn("JobRuns.handOff")(function*(id: JobId, token: string, outcome: Outcome, next: TaskKind) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql`UPDATE jobs SET audio_duration_seconds = ${outcome.audioDurationSeconds},
              language = ${outcome.language}, speech_detected = ${outcome.speechDetected},
              speech_ratio = ${outcome.speechRatio}, heartbeat_at = ${yield* now}
            WHERE id = ${id} AND run_token = ${token} AND status = 'processing' AND deleted_at IS NULL
            RETURNING id`
          if (rows.length === 0) return Option.none<string>()
          yield* transcripts.put(id, outcome.transcript)
          return Option.some(yield* tasks.enqueue(next, id, { rerun: "ended" }))
        })).pipe(Effect.orDie)
      })

      const staged = Effect.fn("JobRuns.staged")(function*(id: JobId) {
        const job = yield* one(yield* sql`SELECT * FROM jobs WHERE id = ${id}`.pipe(Effect.orDie))
        const transcript = yield* transcripts.get(id)
        if (Option.isNone(job) || Option.isNone(transcript) || job.value.audio_duration_seconds === null) {
          return Option.none<Outcome>()
        }
        return Option.some<Outcome>({
          transcript: transcript.value,
          audioDurationSeconds: job.value.audio_duration_seconds,
          language: job.value.language,
          speechDetected: job.value.speech_detected ?? false,
          speechRatio: job.value.speech_ratio ?? 0
        })
      })

      const complete = Effect.fn("JobRuns.complete")(function*(id: JobId, token: string, outcome: Outcome) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const at = yield* now
          const rows = yield* sql`UPDATE jobs SET status = 'done', progress = 100, completed_at = ${at},
              audio_duration_seconds = ${outcome.audioDurationSeconds}, language = ${outcome.language},
              speech_detected = ${outcome.speechDetected}, speech_ratio = ${outcome.speechRatio},
              diarization = ${outcome.diarization ?? null},
              error = NULL, error_code = NULL, retryable = NULL
            WHERE id = ${id} AND run_token = ${token} AND status = 'processing'
            RETURNING *`
          const done = yield* one(rows)
          if (Option.isNone(done)) return done
          yield* transcripts.put(id, outcome.transcript)
          // Charged (or locked) in the same transaction: a job is done and billed together.
          const settlement = yield* billing.settle(done.value)
          yield* log.append("finished", [done.value])
          return Option.some({ ...done.value, locked: settlement.locked })
        })).pipe(Effect.orDie)
      })

      const fail = Effect.fn("JobRuns.fail")(function*(id: JobId, token: string | null, failure: Failure) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const at = yield* now
          const rows = yield* sql`UPDATE jobs SET status = 'failed', completed_at = ${at}, error = ${failure.error},
              error_code = ${failure.code}, retryable = ${failure.retryable}
            WHERE id = ${id} AND status IN ('queued', 'processing')
              AND (${token}::uuid IS NULL OR run_token = ${token}::uuid)
            RETURNING *`
          const failed = yield* one(rows)
          if (Option.isSome(failed)) yield* log.append("finished", [failed.value])
          return failed
        })).pipe(Effect.orDie)
      })

      return JobRuns.of({ claim, heartbeat, attachMedia, handOff, staged, complete, fail })
    })
  )
}
