/**
 * The jobs table: creation (with idempotency and the plan's concurrency cap decided in
 * the same transaction), reads scoped by the caller, soft deletion with a 24-hour
 * restore window, and the runner's side — claim, heartbeat, finish — guarded by a per-run
 * token so a job ends `done` or `failed` exactly once even if a stale runner wakes up.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { AccountId, JobId } from "../../src/contract/domain/Ids.ts"
import type { JobErrorCode, JobStatus } from "../../src/contract/domain/Job.ts"
import { type Transcript, Transcript as TranscriptSchema } from "../../src/contract/domain/Transcript.ts"
import { Billing } from "../billing/Billing.ts"
import { numbersFromBigInt } from "../db/BigIntColumns.ts"
import { JobRecord, type NewJob } from "./JobRecord.ts"

export const restoreWindowMs = 24 * 3600 * 1000

export class ConcurrencyLimitReached extends Schema.TaggedError<ConcurrencyLimitReached>()("ConcurrencyLimitReached", {
  limit: Schema.Int,
  running: Schema.Int
}) {}

export class JobNotFound extends Schema.TaggedError<JobNotFound>()("JobNotFound", {
  jobId: Schema.String
}) {}

export interface Idempotency {
  /** Per API key (or per keyless client). */
  readonly scope: string
  readonly key: string
  readonly operation: string
}

export interface CreateOptions {
  readonly idempotency?: Idempotency | undefined
  /** The account's cap on queued + processing jobs, checked under a row lock. */
  readonly concurrencyLimit?: number | undefined
}

export interface Outcome {
  readonly transcript: Transcript
  readonly audioDurationSeconds: number
  readonly language: string | null
  readonly speechDetected: boolean
  readonly speechRatio: number
}

export interface Failure {
  readonly error: string
  readonly code: JobErrorCode
  readonly retryable: boolean
}

const decodeJob = Schema.decodeUnknownEffect(JobRecord)
const decodeTranscript = Schema.decodeUnknownEffect(TranscriptSchema)

export class JobStore extends Context.Service<JobStore, {
  create(job: NewJob, options?: CreateOptions): Effect.Effect<{ readonly job: JobRecord; readonly replay: boolean }, ConcurrencyLimitReached>
  /** A job that is not deleted. */
  get(id: JobId): Effect.Effect<Option.Option<JobRecord>>
  /** Takes `idempotency` for `jobId`; Some(earlier job id) when the key was used before. */
  reserveIdempotency(idempotency: Idempotency, jobId: JobId): Effect.Effect<Option.Option<JobId>>
  /** The job an idempotency key names, if it still exists (deleted ones included). */
  findByIdempotency(scope: string, key: string): Effect.Effect<Option.Option<JobRecord>>
  /** Deleted ones too (restore checks ownership on those), until purged. */
  getAny(id: JobId): Effect.Effect<Option.Option<JobRecord>>
  list(accountId: AccountId, options: { readonly limit: number; readonly offset: number; readonly status?: JobStatus | undefined }): Effect.Effect<{ readonly jobs: ReadonlyArray<JobRecord>; readonly total: number }>
  getMany(ids: ReadonlyArray<JobId>): Effect.Effect<ReadonlyArray<JobRecord>>
  /** Jobs queued before this one (FIFO over the whole service); 0 unless queued. */
  queuePosition(job: JobRecord): Effect.Effect<number>
  runningCount(accountId: AccountId): Effect.Effect<number>
  /** Soft delete: the job disappears from reads; files stay for the restore window. */
  remove(id: JobId): Effect.Effect<void, JobNotFound>
  /** Undo a delete within 24 hours; an unfinished job goes back to the queue. */
  restore(id: JobId, accountId: AccountId | null): Effect.Effect<JobRecord, JobNotFound>
  transcript(id: JobId): Effect.Effect<Option.Option<Transcript>>
  saveTranscript(id: JobId, transcript: Transcript): Effect.Effect<void>
  unfinished: Effect.Effect<ReadonlyArray<JobId>>

  // — the runner's side —
  /** Takes the job for one run; None when it ended, was deleted, or does not exist. */
  claim(id: JobId): Effect.Effect<Option.Option<{ readonly job: JobRecord; readonly token: string }>>
  /** Records progress; false once the run lost the job (deleted, or claimed by a newer run). */
  heartbeat(id: JobId, token: string, progress: number, facts?: { readonly audioDurationSeconds?: number }): Effect.Effect<boolean>
  /** A link job's media, once downloaded, becomes the job's stored object. */
  attachMedia(id: JobId, token: string, media: { readonly objectKey: string; readonly sizeBytes: number; readonly contentType: string | null }): Effect.Effect<boolean>
  complete(id: JobId, token: string, outcome: Outcome): Effect.Effect<Option.Option<JobRecord>>
  fail(id: JobId, token: string | null, failure: Failure): Effect.Effect<Option.Option<JobRecord>>
  /** Ends processing jobs whose heartbeat stopped or that ran too long; returns them. */
  failStuck(options: { readonly stalledAfterMs: number; readonly timeoutAfterMs: number }): Effect.Effect<ReadonlyArray<JobRecord>>
  /** Deletes jobs past the restore window; returns their object keys for the storage. */
  purgeExpired: Effect.Effect<ReadonlyArray<string>>
}>()("verbatim/jobs/JobStore") {
  static readonly layer = Layer.effect(
    JobStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const billing = yield* Billing
      const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
      const rowsToJobs = (rows: ReadonlyArray<unknown>) =>
        Effect.forEach(rows, (row) => decodeJob(numbersFromBigInt(row))).pipe(Effect.orDie)
      const one = (rows: ReadonlyArray<unknown>) => Effect.map(rowsToJobs(rows), (jobs) => Option.fromNullishOr(jobs[0]))

      const create = Effect.fn("JobStore.create")(function*(job: NewJob, options: CreateOptions = {}) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const createdAt = yield* now
          if (options.idempotency !== undefined) {
            const { scope, key, operation } = options.idempotency
            const claimed = yield* sql`INSERT INTO idempotency_keys (scope, key, operation, job_id, created_at)
              VALUES (${scope}, ${key}, ${operation}, ${job.id}, ${createdAt})
              ON CONFLICT (scope, key) DO NOTHING RETURNING job_id`
            if (claimed.length === 0) {
              const existing = yield* sql`SELECT j.* FROM idempotency_keys k JOIN jobs j ON j.id = k.job_id
                WHERE k.scope = ${scope} AND k.key = ${key}`
              const found = yield* one(existing)
              if (Option.isSome(found)) return { job: found.value, replay: true }
              // The job the key named was purged: the key now names the job created here.
              yield* sql`UPDATE idempotency_keys SET job_id = ${job.id}, created_at = ${createdAt}
                WHERE scope = ${scope} AND key = ${key}`
            }
          }
          if (job.accountId !== null && options.concurrencyLimit !== undefined) {
            yield* sql`SELECT id FROM accounts WHERE id = ${job.accountId} FOR UPDATE`
            const [row] = yield* sql<{ running: number }>`SELECT count(*)::int AS running FROM jobs
              WHERE account_id = ${job.accountId} AND status IN ('queued', 'processing') AND deleted_at IS NULL`
            const running = row?.running ?? 0
            if (running >= options.concurrencyLimit) {
              return yield* new ConcurrencyLimitReached({ limit: options.concurrencyLimit, running })
            }
          }
          const rows = yield* sql`INSERT INTO jobs ${
            sql.insert({
              id: job.id,
              account_id: job.accountId,
              api_key_id: job.apiKeyId,
              guest_client: job.guestClient,
              claim_hash: job.claimHash,
              status: "queued",
              source: job.source,
              input_kind: job.inputKind,
              filename: job.filename,
              object_key: job.objectKey,
              size_bytes: job.sizeBytes,
              content_type: job.contentType,
              input_url: job.inputUrl,
              resolved_media: job.resolvedMedia === null || job.resolvedMedia === undefined
                ? null
                : JSON.stringify(job.resolvedMedia),
              language_requested: job.language,
              diarize: job.diarize,
              word_timestamps: job.wordTimestamps,
              webhook_url: job.webhookUrl,
              created_at: createdAt
            })
          } RETURNING *`
          const created = yield* one(rows)
          return { job: Option.getOrThrow(created), replay: false }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const get = Effect.fn("JobStore.get")(function*(id: JobId) {
        return yield* one(yield* sql`SELECT * FROM jobs WHERE id = ${id} AND deleted_at IS NULL`.pipe(Effect.orDie))
      })

      const reserveIdempotency = Effect.fn("JobStore.reserveIdempotency")(function*(
        idempotency: Idempotency,
        jobId: JobId
      ) {
        const at = yield* now
        const claimed = yield* sql`INSERT INTO idempotency_keys (scope, key, operation, job_id, created_at)
          VALUES (${idempotency.scope}, ${idempotency.key}, ${idempotency.operation}, ${jobId}, ${at})
          ON CONFLICT (scope, key) DO NOTHING RETURNING job_id`.pipe(Effect.orDie)
        if (claimed.length > 0) return Option.none<JobId>()
        const [row] = yield* sql<{ job_id: JobId }>`SELECT job_id FROM idempotency_keys
          WHERE scope = ${idempotency.scope} AND key = ${idempotency.key}`.pipe(Effect.orDie)
        return Option.fromNullishOr(row?.job_id)
      })

      const findByIdempotency = Effect.fn("JobStore.findByIdempotency")(function*(scope: string, key: string) {
        return yield* one(
          yield* sql`SELECT j.* FROM idempotency_keys k JOIN jobs j ON j.id = k.job_id
            WHERE k.scope = ${scope} AND k.key = ${key}`.pipe(Effect.orDie)
        )
      })

      const getAny = Effect.fn("JobStore.getAny")(function*(id: JobId) {
        return yield* one(yield* sql`SELECT * FROM jobs WHERE id = ${id}`.pipe(Effect.orDie))
      })

      const list = Effect.fn("JobStore.list")(function*(
        accountId: AccountId,
        options: { readonly limit: number; readonly offset: number; readonly status?: JobStatus | undefined }
      ) {
        const status = options.status ?? null
        const rows = yield* sql`SELECT * FROM jobs WHERE account_id = ${accountId} AND deleted_at IS NULL
          AND (${status}::text IS NULL OR status = ${status})
          ORDER BY created_at DESC, id DESC LIMIT ${options.limit} OFFSET ${options.offset}`.pipe(Effect.orDie)
        const [count] = yield* sql<{ total: number }>`SELECT count(*)::int AS total FROM jobs
          WHERE account_id = ${accountId} AND deleted_at IS NULL
          AND (${status}::text IS NULL OR status = ${status})`.pipe(Effect.orDie)
        return { jobs: yield* rowsToJobs(rows), total: count?.total ?? 0 }
      })

      const getMany = Effect.fn("JobStore.getMany")(function*(ids: ReadonlyArray<JobId>) {
        if (ids.length === 0) return []
        return yield* rowsToJobs(
          yield* sql`SELECT * FROM jobs WHERE id IN ${sql.in(ids)} AND deleted_at IS NULL`.pipe(Effect.orDie)
        )
      })

      const queuePosition = Effect.fn("JobStore.queuePosition")(function*(job: JobRecord) {
        if (job.status !== "queued") return 0
        const [row] = yield* sql<{ ahead: number }>`SELECT count(*)::int AS ahead FROM jobs
          WHERE status = 'queued' AND deleted_at IS NULL
          AND (created_at, id) < (${job.created_at}, ${job.id})`.pipe(Effect.orDie)
        return row?.ahead ?? 0
      })

      const runningCount = Effect.fn("JobStore.runningCount")(function*(accountId: AccountId) {
        const [row] = yield* sql<{ running: number }>`SELECT count(*)::int AS running FROM jobs
          WHERE account_id = ${accountId} AND status IN ('queued', 'processing') AND deleted_at IS NULL`.pipe(
          Effect.orDie
        )
        return row?.running ?? 0
      })

      const remove = Effect.fn("JobStore.remove")(function*(id: JobId) {
        const at = yield* now
        const rows = yield* sql`UPDATE jobs SET deleted_at = ${at} WHERE id = ${id} AND deleted_at IS NULL
          RETURNING id`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* new JobNotFound({ jobId: id })
      })

      const restore = Effect.fn("JobStore.restore")(function*(id: JobId, accountId: AccountId | null) {
        const at = yield* now
        const since = new Date(at.getTime() - restoreWindowMs)
        // A job cancelled while unfinished starts over from the queue.
        const rows = yield* sql`UPDATE jobs SET deleted_at = NULL,
            status = CASE WHEN status IN ('queued', 'processing') THEN 'queued' ELSE status END,
            run_token = CASE WHEN status IN ('queued', 'processing') THEN NULL ELSE run_token END,
            progress = CASE WHEN status IN ('queued', 'processing') THEN 0 ELSE progress END
          WHERE id = ${id} AND deleted_at IS NOT NULL AND deleted_at > ${since} AND purged_at IS NULL
            AND account_id IS NOT DISTINCT FROM ${accountId}
          RETURNING *`.pipe(Effect.orDie)
        const restored = yield* one(rows)
        if (Option.isNone(restored)) return yield* new JobNotFound({ jobId: id })
        return restored.value
      })

      const transcript = Effect.fn("JobStore.transcript")(function*(id: JobId) {
        const rows = yield* sql<{ body: unknown }>`SELECT body FROM transcripts WHERE job_id = ${id}`.pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) return Option.none<Transcript>()
        const body = typeof row.body === "string" ? JSON.parse(row.body) : row.body
        return Option.some(yield* decodeTranscript(body).pipe(Effect.orDie))
      })

      const saveTranscript = Effect.fn("JobStore.saveTranscript")(function*(id: JobId, body: Transcript) {
        const at = yield* now
        yield* sql`UPDATE transcripts SET body = ${JSON.stringify(body)}::jsonb, corrected_at = ${at}
          WHERE job_id = ${id}`.pipe(Effect.orDie)
      })

      const unfinished = sql<{ id: JobId }>`SELECT id FROM jobs WHERE status IN ('queued', 'processing')
        AND deleted_at IS NULL ORDER BY created_at`.pipe(
        Effect.map((rows) => rows.map((row) => row.id)),
        Effect.orDie,
        Effect.withSpan("JobStore.unfinished")
      )

      const claim = Effect.fn("JobStore.claim")(function*(id: JobId) {
        const at = yield* now
        const token = crypto.randomUUID()
        const rows = yield* sql`UPDATE jobs SET status = 'processing', attempts = attempts + 1, run_token = ${token},
            started_at = COALESCE(started_at, ${at}), heartbeat_at = ${at}, progress = 0
          WHERE id = ${id} AND status IN ('queued', 'processing') AND deleted_at IS NULL
          RETURNING *`.pipe(Effect.orDie)
        return Option.map(yield* one(rows), (job) => ({ job, token }))
      })

      const heartbeat = Effect.fn("JobStore.heartbeat")(function*(
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

      const attachMedia = Effect.fn("JobStore.attachMedia")(function*(
        id: JobId,
        token: string,
        media: { readonly objectKey: string; readonly sizeBytes: number; readonly contentType: string | null }
      ) {
        const rows = yield* sql`UPDATE jobs SET object_key = ${media.objectKey}, size_bytes = ${media.sizeBytes},
            content_type = COALESCE(${media.contentType}, content_type)
          WHERE id = ${id} AND run_token = ${token} RETURNING id`.pipe(Effect.orDie)
        return rows.length > 0
      })

      const complete = Effect.fn("JobStore.complete")(function*(id: JobId, token: string, outcome: Outcome) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const at = yield* now
          const rows = yield* sql`UPDATE jobs SET status = 'done', progress = 100, completed_at = ${at},
              audio_duration_seconds = ${outcome.audioDurationSeconds}, language = ${outcome.language},
              speech_detected = ${outcome.speechDetected}, speech_ratio = ${outcome.speechRatio},
              error = NULL, error_code = NULL, retryable = NULL
            WHERE id = ${id} AND run_token = ${token} AND status = 'processing'
            RETURNING *`
          const done = yield* one(rows)
          if (Option.isNone(done)) return done
          yield* sql`INSERT INTO transcripts (job_id, body) VALUES (${id}, ${JSON.stringify(outcome.transcript)}::jsonb)
            ON CONFLICT (job_id) DO UPDATE SET body = EXCLUDED.body, corrected_at = NULL`
          // Charged (or locked) in the same transaction: a job is done and billed together.
          const settlement = yield* billing.settle(done.value)
          return Option.some({ ...done.value, locked: settlement.locked })
        })).pipe(Effect.orDie)
      })

      const fail = Effect.fn("JobStore.fail")(function*(id: JobId, token: string | null, failure: Failure) {
        const at = yield* now
        const rows = yield* sql`UPDATE jobs SET status = 'failed', completed_at = ${at}, error = ${failure.error},
            error_code = ${failure.code}, retryable = ${failure.retryable}
          WHERE id = ${id} AND status IN ('queued', 'processing')
            AND (${token}::uuid IS NULL OR run_token = ${token}::uuid)
          RETURNING *`.pipe(Effect.orDie)
        return yield* one(rows)
      })

      const failStuck = Effect.fn("JobStore.failStuck")(function*(options: {
        readonly stalledAfterMs: number
        readonly timeoutAfterMs: number
      }) {
        const at = yield* now
        const stalledBefore = new Date(at.getTime() - options.stalledAfterMs)
        const startedBefore = new Date(at.getTime() - options.timeoutAfterMs)
        const stalled = yield* sql`UPDATE jobs SET status = 'failed', completed_at = ${at}, retryable = true,
            error_code = 'PROCESSING_STALLED',
            error = 'Processing stopped making progress; resubmitting the same request can succeed.'
          WHERE status = 'processing' AND deleted_at IS NULL AND heartbeat_at < ${stalledBefore}
          RETURNING *`.pipe(Effect.orDie)
        const timedOut = yield* sql`UPDATE jobs SET status = 'failed', completed_at = ${at}, retryable = true,
            error_code = 'PROCESSING_TIMEOUT',
            error = 'Processing took longer than the time allowed; resubmitting the same request can succeed.'
          WHERE status = 'processing' AND deleted_at IS NULL AND started_at < ${startedBefore}
          RETURNING *`.pipe(Effect.orDie)
        return yield* rowsToJobs([...stalled, ...timedOut])
      })

      const purgeExpired = Effect.gen(function*() {
        const at = yield* now
        const before = new Date(at.getTime() - restoreWindowMs)
        const rows = yield* sql<{ object_key: string | null }>`DELETE FROM jobs
          WHERE deleted_at IS NOT NULL AND deleted_at <= ${before} RETURNING object_key`.pipe(Effect.orDie)
        return rows.flatMap((row) => row.object_key === null ? [] : [row.object_key])
      }).pipe(Effect.withSpan("JobStore.purgeExpired"))

      return JobStore.of({
        create,
        get,
        getAny,
        reserveIdempotency,
        findByIdempotency,
        list,
        getMany,
        queuePosition,
        runningCount,
        remove,
        restore,
        transcript,
        saveTranscript,
        unfinished,
        claim,
        heartbeat,
        attachMedia,
        complete,
        fail,
        failStuck,
        purgeExpired
      })
    })
  )
}
