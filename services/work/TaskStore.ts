/**
 * The `tasks` table: one row per (kind, job, sub-key) — the job NULL for a task that stands
 * alone — the durable truth about a task. The cluster message only wakes a runner up (any
 * runner with a free slot claims due tasks from here); what the task is (its kind and JSON payload), how often it was attempted, when it
 * may be attempted next (`not_before`) and whether it ended lives here. Each attempt takes a
 * fresh run token: heartbeats and the end of an attempt are accepted only with the current
 * token, so an attempt that lost the task (given up meanwhile, or replaced) cannot write over it.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { JobId } from "../../src/contract/domain/Ids.ts"
import type { TaskKind } from "./TaskKind.ts"

export const TaskStatus = Schema.Literals(["pending", "running", "done", "failed"])

export const TaskRecord = Schema.Struct({
  id: Schema.String,
  kind: Schema.String,
  job_id: Schema.NullOr(JobId),
  sub_key: Schema.String,
  /** The kind's payload as JSON (NULL for a kind without one); decoded by the engine with the kind's Schema. */
  payload: Schema.Unknown,
  status: TaskStatus,
  attempts: Schema.Int,
  rerun: Schema.Boolean,
  run_token: Schema.NullOr(Schema.String),
  last_error: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  started_at: Schema.NullOr(Schema.Date),
  attempt_at: Schema.NullOr(Schema.Date),
  heartbeat_at: Schema.NullOr(Schema.Date),
  /** When the running attempt last showed progress (see `TaskKindSpec.watchProgress`); set with every beat otherwise. */
  progress_at: Schema.NullOr(Schema.Date),
  not_before: Schema.NullOr(Schema.Date),
  finished_at: Schema.NullOr(Schema.Date)
})
export type TaskRecord = typeof TaskRecord.Type

export interface EnqueueOptions {
  readonly subKey?: string | undefined
  /**
   * Without it an existing task is left as it is. `ended`: a task that already ended starts
   * over (attempts from zero). `latest`: that, and a running one starts over once its
   * attempt ends (so it sees what changed meanwhile). A pending task runs anyway.
   */
  readonly rerun?: "ended" | "latest" | undefined
  /** The payload already encoded to JSON by the kind's Schema (see `Tasks.submit`); none by default. */
  readonly payload?: unknown
}

const decodeTasks = Schema.decodeUnknownEffect(Schema.Array(TaskRecord))

export class TaskStore extends Context.Service<TaskStore, {
  /** Creates the task, or names the existing one; returns its id. Joins the caller's transaction. */
  enqueue(kind: TaskKind, jobId: JobId | null, options?: EnqueueOptions): Effect.Effect<string>
  get(id: string): Effect.Effect<Option.Option<TaskRecord>>
  /**
   * Claims the oldest task of `kinds` that is due — pending past its `not_before`, or running
   * with a lease silent since `leaseExpiredBefore` (its runner died) — and starts an attempt on
   * it (attempts + 1, fresh token). `FOR UPDATE SKIP LOCKED`: runners claiming at once each get
   * another task, and a task is held by one attempt at a time. None when nothing is due.
   */
  claim(kinds: ReadonlyArray<TaskKind>, leaseExpiredBefore: Date): Effect.Effect<Option.Option<{ readonly task: TaskRecord; readonly token: string }>>
  /** Makes every running task claimable at once (embedded storage at start: their process is gone). */
  readonly orphanRunning: Effect.Effect<number>
  /** Beats the leases of `tokens` (those still held come back); `progressed` also move their `progress_at`. */
  beat(tokens: ReadonlyArray<string>, progressed: ReadonlyArray<string>): Effect.Effect<ReadonlySet<string>>
  finish(id: string, token: string): Effect.Effect<boolean>
  /** A failed attempt: the task waits for the next one, not before `notBefore`. */
  retryLater(id: string, token: string, error: string, notBefore: Date): Effect.Effect<boolean>
  /** An interrupted attempt (shutdown) does not count against the cap. */
  release(id: string, token: string): Effect.Effect<void>
  /**
   * Ends the task as failed; false when it had already ended. With `token`, only while that
   * attempt still holds it (an attempt that lost its lease must not end a task another runner
   * took over); without, whatever attempt holds it (a supervisor giving a task up).
   */
  markFailed(id: string, error: string, token?: string): Effect.Effect<boolean>
  /** Whether the attempt with `token` still holds its running task. */
  holds(id: string, token: string): Effect.Effect<boolean>
  /**
   * Running tasks of `kind` started before `startedBefore`, or whose lease is alive (beaten
   * since `leaseAliveSince`) but silent (or without progress) since `silentSince`. A task whose
   * lease expired is not stuck: its process is gone and any runner with a free slot claims it.
   */
  stuck(kind: TaskKind, bounds: { readonly silentSince: Date; readonly startedBefore: Date; readonly leaseAliveSince: Date }): Effect.Effect<ReadonlyArray<TaskRecord>>
  /** Deletes ended tasks whose job is gone, and jobless tasks a day after they ended; returns how many. */
  readonly purgeOrphans: Effect.Effect<number>
}>()("verbatim/work/TaskStore") {
  static readonly layer = Layer.effect(
    TaskStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
      /** Ends the task as `status`, or starts it over when a rerun was asked for meanwhile. */
      const endOrStartOver = (status: "done" | "failed", at: Date) =>
        sql`status = CASE WHEN rerun THEN 'pending' ELSE ${status} END,
          attempts = CASE WHEN rerun THEN 0 ELSE attempts END,
          started_at = CASE WHEN rerun THEN NULL ELSE started_at END,
          finished_at = CASE WHEN rerun THEN NULL ELSE ${at}::timestamptz END,
          rerun = false, run_token = NULL`
      const rows = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeTasks), Effect.orDie)
      const first = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        Effect.map(rows(query), (tasks) => Option.fromNullishOr(tasks[0]))

      const enqueue = Effect.fn("TaskStore.enqueue")(function*(kind: TaskKind, jobId: JobId | null, options: EnqueueOptions = {}) {
        const at = yield* now
        const rerun = options.rerun !== undefined
        const latest = options.rerun === "latest"
        const payload = options.payload === undefined || options.payload === null ? null : JSON.stringify(options.payload)
        const [row] = yield* sql<{ id: string }>`INSERT INTO tasks (id, kind, job_id, sub_key, payload, status, created_at)
          VALUES (${crypto.randomUUID()}, ${kind}, ${jobId}, ${options.subKey ?? ""}, ${payload}::jsonb, 'pending', ${at})
          ON CONFLICT (kind, job_id, sub_key) DO UPDATE SET
            status = CASE WHEN ${rerun} AND tasks.status IN ('done', 'failed') THEN 'pending' ELSE tasks.status END,
            attempts = CASE WHEN ${rerun} AND tasks.status IN ('done', 'failed') THEN 0 ELSE tasks.attempts END,
            started_at = CASE WHEN ${rerun} AND tasks.status IN ('done', 'failed') THEN NULL ELSE tasks.started_at END,
            finished_at = CASE WHEN ${rerun} AND tasks.status IN ('done', 'failed') THEN NULL ELSE tasks.finished_at END,
            not_before = CASE WHEN ${rerun} AND tasks.status IN ('done', 'failed') THEN NULL ELSE tasks.not_before END,
            rerun = tasks.rerun OR (${latest} AND tasks.status = 'running'),
            -- A rerun runs with the parameters it was asked with (a running task's next attempt, with latest).
            payload = CASE WHEN ${rerun} AND (tasks.status <> 'running' OR ${latest}) THEN EXCLUDED.payload ELSE tasks.payload END
          RETURNING id::text AS id`.pipe(Effect.orDie)
        return row!.id
      })

      const get = Effect.fn("TaskStore.get")(function*(id: string) {
        return yield* first(sql`SELECT * FROM tasks WHERE id = ${id}`)
      })

      const claim = Effect.fn("TaskStore.claim")(function*(kinds: ReadonlyArray<TaskKind>, leaseExpiredBefore: Date) {
        if (kinds.length === 0) return Option.none()
        const at = yield* now
        const token = crypto.randomUUID()
        const task = yield* first(sql`UPDATE tasks SET status = 'running', attempts = attempts + 1, run_token = ${token},
            started_at = COALESCE(started_at, ${at}), attempt_at = ${at}, heartbeat_at = ${at}, progress_at = ${at}, not_before = NULL
          WHERE id = (SELECT id FROM tasks WHERE kind IN ${sql.in(kinds)} AND (
              (status = 'pending' AND (not_before IS NULL OR not_before <= ${at}))
              OR (status = 'running' AND heartbeat_at < ${leaseExpiredBefore}))
            ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
          RETURNING *`)
        return Option.map(task, (task) => ({ task, token }))
      })

      const orphanRunning = sql`UPDATE tasks SET heartbeat_at = 'epoch' WHERE status = 'running' RETURNING id`.pipe(
        Effect.map((rows) => rows.length),
        Effect.orDie,
        Effect.withSpan("TaskStore.orphanRunning")
      )

      const beat = Effect.fn("TaskStore.beat")(function*(tokens: ReadonlyArray<string>, progressed: ReadonlyArray<string>) {
        if (tokens.length === 0) return new Set<string>()
        const at = yield* now
        const progress = progressed.length === 0
          ? sql`progress_at`
          : sql`CASE WHEN run_token IN ${sql.in(progressed)} THEN ${at}::timestamptz ELSE progress_at END`
        const held = yield* sql<{ token: string }>`UPDATE tasks SET heartbeat_at = ${at}, progress_at = ${progress}
          WHERE run_token IN ${sql.in(tokens)} AND status = 'running' RETURNING run_token::text AS token`.pipe(Effect.orDie)
        return new Set(held.map((row) => row.token))
      })

      const finish = Effect.fn("TaskStore.finish")(function*(id: string, token: string) {
        const at = yield* now
        const updated = yield* sql`UPDATE tasks SET ${endOrStartOver("done", at)}, last_error = NULL
          WHERE id = ${id} AND run_token = ${token} AND status = 'running' RETURNING id`.pipe(Effect.orDie)
        return updated.length > 0
      })

      const retryLater = Effect.fn("TaskStore.retryLater")(function*(id: string, token: string, error: string, notBefore: Date) {
        const updated = yield* sql`UPDATE tasks SET status = 'pending', run_token = NULL, last_error = ${error}, not_before = ${notBefore}
          WHERE id = ${id} AND run_token = ${token} AND status = 'running' RETURNING id`.pipe(Effect.orDie)
        return updated.length > 0
      })

      const release = Effect.fn("TaskStore.release")(function*(id: string, token: string) {
        yield* sql`UPDATE tasks SET status = 'pending', run_token = NULL, attempts = GREATEST(attempts - 1, 0)
          WHERE id = ${id} AND run_token = ${token} AND status = 'running'`.pipe(Effect.orDie)
      })

      const markFailed = Effect.fn("TaskStore.markFailed")(function*(id: string, error: string, token?: string) {
        const at = yield* now
        const held = token === undefined ? sql`` : sql`AND run_token = ${token}`
        const updated = yield* sql`UPDATE tasks SET ${endOrStartOver("failed", at)}, last_error = ${error}
          WHERE id = ${id} AND status IN ('pending', 'running') ${held} RETURNING id`.pipe(Effect.orDie)
        return updated.length > 0
      })

      const holds = Effect.fn("TaskStore.holds")(function*(id: string, token: string) {
        const found = yield* sql`SELECT 1 FROM tasks WHERE id = ${id} AND run_token = ${token} AND status = 'running'`.pipe(Effect.orDie)
        return found.length > 0
      })

      const stuck = Effect.fn("TaskStore.stuck")(function*(
        kind: TaskKind,
        bounds: { readonly silentSince: Date; readonly startedBefore: Date; readonly leaseAliveSince: Date }
      ) {
        return yield* rows(sql`SELECT * FROM tasks WHERE kind = ${kind} AND status = 'running'
          AND ((COALESCE(progress_at, heartbeat_at) < ${bounds.silentSince} AND heartbeat_at >= ${bounds.leaseAliveSince})
            OR started_at < ${bounds.startedBefore})`)
      })

      // A task without a job goes a day after it ended (its row is the only record of how it ended).
      const purgeOrphans = sql`DELETE FROM tasks t WHERE t.status IN ('done', 'failed') AND (
          (t.job_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = t.job_id))
          OR (t.job_id IS NULL AND t.finished_at < now() - interval '1 day')
        ) RETURNING t.id`.pipe(
        Effect.map((deleted) => deleted.length),
        Effect.orDie,
        Effect.withSpan("TaskStore.purgeOrphans")
      )

      return TaskStore.of({
        enqueue,
        get,
        claim,
        orphanRunning,
        beat,
        finish,
        retryLater,
        release,
        markFailed,
        holds,
        stuck,
        purgeOrphans
      })
    })
  )
}
