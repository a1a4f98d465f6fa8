/**
 * The jobs table as the API sees it: creation (with idempotency and the plan's concurrency
 * cap decided in the same transaction), reads scoped by the caller, soft deletion with a
 * 24-hour restore window and the purge after it. Deletion, restore and purge append their
 * job event (`JobEventLog`) in the transaction that makes them. The runner's side of a job
 * is `JobRuns`; transcripts are `TranscriptStore`; keys are `IdempotencyKeys`.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { AccountId, JobId } from "../../src/contract/domain/Ids.ts"
import type { JobStatus } from "../../src/contract/domain/Job.ts"
import { JobEventLog } from "../work/JobEventLog.ts"
import { type Idempotency, IdempotencyKeys } from "./IdempotencyKeys.ts"
import { decodeJobRows, type JobRecord, type NewJob } from "./JobRecord.ts"

export type { Idempotency } from "./IdempotencyKeys.ts"

export const restoreWindowMs = 24 * 3600 * 1000

export class ConcurrencyLimitReached extends Schema.TaggedError<ConcurrencyLimitReached>()("ConcurrencyLimitReached", {
  limit: Schema.Int,
  running: Schema.Int
}) {}

export class JobNotFound extends Schema.TaggedError<JobNotFound>()("JobNotFound", {
  jobId: Schema.String
}) {}

export interface CreateOptions {
  readonly idempotency?: Idempotency | undefined
  /** The account's cap on queued + processing jobs, checked under a row lock. */
  readonly concurrencyLimit?: number | undefined
}

export class JobStore extends Context.Service<JobStore, {
  create(job: NewJob, options?: CreateOptions): Effect.Effect<{ readonly job: JobRecord; readonly replay: boolean }, ConcurrencyLimitReached>
  /** A job that is not deleted. */
  get(id: JobId): Effect.Effect<Option.Option<JobRecord>>
  /** Deleted ones too (restore checks ownership on those), until purged. */
  getAny(id: JobId): Effect.Effect<Option.Option<JobRecord>>
  list(accountId: AccountId, options: { readonly limit: number; readonly offset: number; readonly status?: JobStatus | undefined }): Effect.Effect<{ readonly jobs: ReadonlyArray<JobRecord>; readonly total: number }>
  /**
   * The account's deleted jobs that restore can still bring back (deleted within the restore
   * window, not purged), most recently deleted first; same page and total as `list`.
   */
  listDeleted(accountId: AccountId, options: { readonly limit: number; readonly offset: number }): Effect.Effect<{ readonly jobs: ReadonlyArray<JobRecord>; readonly total: number }>
  getMany(ids: ReadonlyArray<JobId>): Effect.Effect<ReadonlyArray<JobRecord>>
  /** Jobs queued before this one (FIFO over the whole service); 0 unless queued. */
  queuePosition(job: JobRecord): Effect.Effect<number>
  /**
   * `queuePosition` of each queued job among `jobs`, in one statement (a page of the list would
   * otherwise cost one query per queued job); jobs that are not queued are absent (position 0).
   */
  queuePositions(jobs: ReadonlyArray<JobRecord>): Effect.Effect<ReadonlyMap<JobId, number>>
  /** Records the served type of a row from before `media_type` existed (sniffed on its first play). */
  recordMediaType(id: JobId, mediaType: string): Effect.Effect<void>
  /** Ids of the account's locked (unpaid) jobs that are not deleted. */
  lockedIds(accountId: AccountId): Effect.Effect<ReadonlyArray<JobId>>
  /** Soft delete: the job disappears from reads; files stay for the restore window. */
  remove(id: JobId): Effect.Effect<void, JobNotFound>
  /** Undo a delete within 24 hours; an unfinished job goes back to the queue. */
  restore(id: JobId, accountId: AccountId | null): Effect.Effect<JobRecord, JobNotFound>
  /** Jobs that have not ended (queued or processing), oldest first: re-dispatched at start. */
  readonly unfinished: Effect.Effect<ReadonlyArray<JobId>>
  /** Deletes jobs past the restore window; returns their object keys for the storage. */
  readonly purgeExpired: Effect.Effect<ReadonlyArray<string>>
}>()("verbatim/jobs/JobStore") {
  static readonly layer = Layer.effect(
    JobStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const keys = yield* IdempotencyKeys
      const log = yield* JobEventLog
      const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
      const one = (rows: ReadonlyArray<unknown>) => Effect.map(decodeJobRows(rows), (jobs) => Option.fromNullishOr(jobs[0]))

      const create = Effect.fn("JobStore.create")(function*(job: NewJob, options: CreateOptions = {}) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const createdAt = yield* now
          if (options.idempotency !== undefined) {
            const earlier = yield* keys.reserve(options.idempotency, job.id)
            if (Option.isSome(earlier)) {
              const found = yield* one(yield* sql`SELECT * FROM jobs WHERE id = ${earlier.value}`)
              if (Option.isSome(found)) return { job: found.value, replay: true }
              // The job the key named was purged: the key now names the job created here.
              yield* keys.repoint(options.idempotency, job.id)
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
              media_type: job.mediaType ?? null,
              input_url: job.inputUrl,
              resolved_media: job.resolvedMedia === null ? null : JSON.stringify(job.resolvedMedia),
              language_requested: job.language,
              diarize: job.diarize,
              min_speakers: job.minSpeakers ?? null,
              max_speakers: job.maxSpeakers ?? null,
              word_timestamps: job.wordTimestamps,
              prompt: job.prompt ?? null,
              task: job.task ?? "transcribe",
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

      const getAny = Effect.fn("JobStore.getAny")(function*(id: JobId) {
        return yield* one(yield* sql`SELECT * FROM jobs WHERE id = ${id}`.pipe(Effect.orDie))
      })

      const list = Effect.fn("JobStore.list")(function*(
        accountId: AccountId,
        options: { readonly limit: number; readonly offset: number; readonly status?: JobStatus | undefined }
      ) {
        const status = options.status ?? null
        // The page and the total in one statement (a window count over the filtered rows); only
        // a page past the end, which has no row to carry the count, needs a second query.
        const rows = yield* sql<{ readonly total_count: number }>`SELECT *, count(*) OVER ()::int AS total_count
          FROM jobs WHERE account_id = ${accountId} AND deleted_at IS NULL
          AND (${status}::text IS NULL OR status = ${status})
          ORDER BY created_at DESC, id DESC LIMIT ${options.limit} OFFSET ${options.offset}`.pipe(Effect.orDie)
        if (rows.length > 0) {
          const jobs = yield* decodeJobRows(rows.map(({ total_count: _, ...row }) => row))
          return { jobs, total: rows[0]!.total_count }
        }
        const [count] = yield* sql<{ total: number }>`SELECT count(*)::int AS total FROM jobs
          WHERE account_id = ${accountId} AND deleted_at IS NULL
          AND (${status}::text IS NULL OR status = ${status})`.pipe(Effect.orDie)
        return { jobs: [], total: count?.total ?? 0 }
      })

      const listDeleted = Effect.fn("JobStore.listDeleted")(function*(
        accountId: AccountId,
        options: { readonly limit: number; readonly offset: number }
      ) {
        // The same predicate as `restore`, so every job listed here can be restored.
        const since = new Date((yield* now).getTime() - restoreWindowMs)
        const rows = yield* sql<{ readonly total_count: number }>`SELECT *, count(*) OVER ()::int AS total_count
          FROM jobs WHERE account_id = ${accountId} AND deleted_at IS NOT NULL AND deleted_at > ${since}
          AND purged_at IS NULL
          ORDER BY deleted_at DESC, id DESC LIMIT ${options.limit} OFFSET ${options.offset}`.pipe(Effect.orDie)
        if (rows.length > 0) {
          const jobs = yield* decodeJobRows(rows.map(({ total_count: _, ...row }) => row))
          return { jobs, total: rows[0]!.total_count }
        }
        const [count] = yield* sql<{ total: number }>`SELECT count(*)::int AS total FROM jobs
          WHERE account_id = ${accountId} AND deleted_at IS NOT NULL AND deleted_at > ${since}
          AND purged_at IS NULL`.pipe(Effect.orDie)
        return { jobs: [], total: count?.total ?? 0 }
      })

      const getMany = Effect.fn("JobStore.getMany")(function*(ids: ReadonlyArray<JobId>) {
        if (ids.length === 0) return []
        return yield* decodeJobRows(
          yield* sql`SELECT * FROM jobs WHERE id IN ${sql.in(ids)} AND deleted_at IS NULL`.pipe(Effect.orDie)
        )
      })

      const queuePositions = Effect.fn("JobStore.queuePositions")(function*(jobs: ReadonlyArray<JobRecord>) {
        const queued = jobs.filter((job) => job.status === "queued")
        if (queued.length === 0) return new Map<JobId, number>()
        // Queued jobs run oldest first: a job's position is the number of live queued jobs stored
        // before it, by (created_at, id).
        const rows = yield* sql<{ id: JobId; ahead: number }>`SELECT q.id, (SELECT count(*)::int FROM jobs j
            WHERE j.status = 'queued' AND j.deleted_at IS NULL
            AND (j.created_at, j.id) < (q.created_at, q.id)) AS ahead
          FROM jobs q WHERE q.id IN ${sql.in(queued.map((job) => job.id))}`.pipe(Effect.orDie)
        return new Map(rows.map((row) => [row.id, row.ahead] as const))
      })

      const queuePosition = Effect.fn("JobStore.queuePosition")(function*(job: JobRecord) {
        return (yield* queuePositions([job])).get(job.id) ?? 0
      })

      const recordMediaType = Effect.fn("JobStore.recordMediaType")(function*(id: JobId, mediaType: string) {
        yield* sql`UPDATE jobs SET media_type = ${mediaType} WHERE id = ${id} AND media_type IS NULL`.pipe(Effect.orDie)
      })

      const lockedIds = Effect.fn("JobStore.lockedIds")(function*(accountId: AccountId) {
        const rows = yield* sql<{ id: JobId }>`SELECT id FROM jobs
          WHERE account_id = ${accountId} AND locked AND deleted_at IS NULL`.pipe(Effect.orDie)
        return rows.map((row) => row.id)
      })

      const remove = Effect.fn("JobStore.remove")(function*(id: JobId) {
        const removed = yield* sql.withTransaction(Effect.gen(function*() {
          const at = yield* now
          const rows = yield* sql<{ id: JobId; account_id: AccountId | null }>`UPDATE jobs SET deleted_at = ${at}
            WHERE id = ${id} AND deleted_at IS NULL RETURNING id, account_id`
          yield* log.append("deleted", rows)
          return rows.length
        })).pipe(Effect.orDie)
        if (removed === 0) return yield* new JobNotFound({ jobId: id })
      })

      const restore = Effect.fn("JobStore.restore")(function*(id: JobId, accountId: AccountId | null) {
        const restored = yield* sql.withTransaction(Effect.gen(function*() {
          const at = yield* now
          const since = new Date(at.getTime() - restoreWindowMs)
          // A job cancelled while unfinished starts over from the queue.
          const rows = yield* sql`UPDATE jobs SET deleted_at = NULL,
              status = CASE WHEN status IN ('queued', 'processing') THEN 'queued' ELSE status END,
              run_token = CASE WHEN status IN ('queued', 'processing') THEN NULL ELSE run_token END,
              progress = CASE WHEN status IN ('queued', 'processing') THEN 0 ELSE progress END
            WHERE id = ${id} AND deleted_at IS NOT NULL AND deleted_at > ${since} AND purged_at IS NULL
              AND account_id IS NOT DISTINCT FROM ${accountId}
            RETURNING *`
          const restored = yield* one(rows)
          if (Option.isSome(restored)) yield* log.append("restored", [restored.value])
          return restored
        })).pipe(Effect.orDie)
        if (Option.isNone(restored)) return yield* new JobNotFound({ jobId: id })
        return restored.value
      })

      const unfinished = sql<{ id: JobId }>`SELECT id FROM jobs WHERE status IN ('queued', 'processing')
        AND deleted_at IS NULL ORDER BY created_at`.pipe(
        Effect.map((rows) => rows.map((row) => row.id)),
        Effect.orDie,
        Effect.withSpan("JobStore.unfinished")
      )

      const purgeExpired = sql.withTransaction(Effect.gen(function*() {
        const at = yield* now
        const before = new Date(at.getTime() - restoreWindowMs)
        const rows = yield* sql<{ id: JobId; account_id: AccountId | null; object_key: string | null }>`DELETE FROM jobs
          WHERE deleted_at IS NOT NULL AND deleted_at <= ${before} RETURNING id, account_id, object_key`
        yield* log.append("purged", rows)
        return rows.flatMap((row) => row.object_key === null ? [] : [row.object_key])
      })).pipe(Effect.orDie, Effect.withSpan("JobStore.purgeExpired"))

      return JobStore.of({
        create,
        get,
        getAny,
        list,
        listDeleted,
        getMany,
        queuePosition,
        queuePositions,
        recordMediaType,
        lockedIds,
        remove,
        restore,
        unfinished,
        purgeExpired
      })
    })
  )
}
