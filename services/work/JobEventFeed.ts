/**
 * Delivers the job event outbox (`JobEventLog`) to its consumers: webhooks today, the
 * search index and insights invalidation next. Each consumer has a cursor row; a pass
 * locks the cursor, hands the next events to the consumer and moves the cursor, all in
 * one transaction. So a consumer whose reaction is a database write (recording a webhook
 * delivery, storing a task row) sees every event exactly once, even across crashes and
 * with several processes passing at once; a consumer that fails leaves its cursor where
 * it was and gets the same events on the next pass (one second later), in order.
 *
 * A consumer typically reacts by asking for tasks: it returns them, the feed stores their
 * rows inside the same transaction and sends their messages after the commit (a message
 * lost to a crash in between costs nothing: any runner's poll claims the row within a second).
 * Consumers must only touch the database in `handle` (the transaction holds a
 * connection; on embedded storage the only one).
 */
import { Clock, Context, Duration, Effect, Layer, Schedule } from "effect"
import { Singleton } from "effect/cluster"
import { SqlClient } from "effect/sql"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { type JobEvent, JobEventLog, type JobEventType } from "./JobEventLog.ts"
import type { TaskKind } from "./TaskKind.ts"
import { Tasks } from "./Tasks.ts"
import { TaskStore } from "./TaskStore.ts"

export interface TaskRequest {
  readonly kind: TaskKind
  readonly jobId: JobId
  readonly subKey?: string | undefined
  /** See `EnqueueOptions.rerun`: `latest` to re-index after a correction, say. */
  readonly rerun?: "ended" | "latest" | undefined
}

/**
 * A task the consumer stored itself in `handle` (a declared kind with its typed payload, through
 * `storeTask`): the feed sends its wake-up after the commit.
 */
export interface StoredTask {
  readonly storedTaskId: string
}

export interface JobEventConsumer {
  /** The cursor's name: keep it stable, a new name starts from the oldest retained event. */
  readonly name: string
  readonly types: ReadonlyArray<JobEventType>
  handle(event: JobEvent): Effect.Effect<ReadonlyArray<TaskRequest | StoredTask>>
}

/** Events kept this long after every consumer has passed them. */
export const eventRetentionMs = 7 * 24 * 3600 * 1000
const batch = 50

export class JobEventFeed extends Context.Service<JobEventFeed, {
  /** Delivers every pending event to every consumer; returns how many deliveries were made. */
  readonly pass: Effect.Effect<number>
  /** Deletes events older than the retention that every consumer has passed. */
  readonly trim: Effect.Effect<number>
}>()("verbatim/work/JobEventFeed") {
  /** Requires `Tasks` (so `Sharding`), `TaskStore`, `JobEventLog`. */
  static readonly layer = <R>(...consumers: ReadonlyArray<Effect.Effect<JobEventConsumer, never, R>>) =>
    Layer.effect(
      JobEventFeed,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const log = yield* JobEventLog
        const store = yield* TaskStore
        const tasks = yield* Tasks
        const all = yield* Effect.all(consumers)
        const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
        for (const consumer of all) {
          yield* sql`INSERT INTO job_event_cursors (consumer, position, updated_at)
            VALUES (${consumer.name}, 0, ${yield* now}) ON CONFLICT (consumer) DO NOTHING`.pipe(Effect.orDie)
        }

        /** One batch for one consumer: (events seen, task ids to send). */
        const step = (consumer: JobEventConsumer) =>
          sql.withTransaction(Effect.gen(function*() {
            const [cursor] = yield* sql<{ position: string | number; position_txid: string }>`SELECT position,
                position_txid::text AS position_txid FROM job_event_cursors
              WHERE consumer = ${consumer.name} FOR UPDATE`
            // In commit-safe order (JobEventLog): an event committed after a later-numbered one is not skipped.
            const events = yield* log.after({ txid: cursor?.position_txid ?? "0", seq: Number(cursor?.position ?? 0) }, batch)
            const taskIds: Array<string> = []
            let delivered = 0
            for (const event of events) {
              if (!consumer.types.includes(event.type)) continue
              delivered++
              for (const request of yield* consumer.handle(event)) {
                taskIds.push(
                  "storedTaskId" in request
                    ? request.storedTaskId
                    : yield* store.enqueue(request.kind, request.jobId, { subKey: request.subKey, rerun: request.rerun })
                )
              }
            }
            const last = events.at(-1)
            if (last !== undefined) {
              yield* sql`UPDATE job_event_cursors SET position = ${last.seq}, position_txid = ${last.txid}::xid8,
                updated_at = ${yield* now}
                WHERE consumer = ${consumer.name}`
            }
            return { seen: events.length, delivered, taskIds }
          })).pipe(Effect.orDie)

        const drain = (consumer: JobEventConsumer): Effect.Effect<number> =>
          Effect.gen(function*() {
            let total = 0
            while (true) {
              const { seen, delivered, taskIds } = yield* step(consumer)
              total += delivered
              yield* Effect.forEach(taskIds, tasks.send, { discard: true })
              if (seen < batch) return total
            }
          }).pipe(
            Effect.catchCause((cause) =>
              Effect.as(Effect.logWarning(`job event consumer ${consumer.name} failed; its events come again`, cause), 0)
            )
          )

        const pass = Effect.map(Effect.forEach(all, drain), (counts) => counts.reduce((a, b) => a + b, 0)).pipe(
          Effect.withSpan("JobEventFeed.pass")
        )

        const trim = Effect.gen(function*() {
          if (all.length === 0) return 0
          const before = new Date((yield* Clock.currentTimeMillis) - eventRetentionMs)
          const names = all.map((consumer) => consumer.name)
          // Only events every consumer has passed in the feed's (txid, seq) order.
          const deleted = yield* sql`DELETE FROM job_events WHERE created_at < ${before}
            AND NOT EXISTS (SELECT 1 FROM job_event_cursors AS cursor WHERE cursor.consumer IN ${sql.in(names)}
              AND (cursor.position_txid, cursor.position) < (job_events.txid, job_events.seq))
            RETURNING seq`.pipe(Effect.orDie)
          return deleted.length
        }).pipe(Effect.withSpan("JobEventFeed.trim"))

        return JobEventFeed.of({ pass, trim })
      })
    )

  /**
   * Passes every second on one process of the cluster (a cluster singleton: the runner owning its
   * shard runs it; on embedded storage the only runner). Passes on several processes would be
   * correct (the cursor row is locked), but each would wait on the other's lock with a pooled
   * connection held, for nothing. The price: after a SIGKILL of the process running it, events
   * wait until its shard moves to a survivor (the shard lock expiry, 12 s by default); a clean
   * stop hands it over at once.
   */
  static readonly loop = Singleton.make(
    "verbatim/work/JobEventFeed",
    Effect.gen(function*() {
      const feed = yield* JobEventFeed
      yield* Effect.logInfo("job event feed runs on this process")
      yield* feed.pass.pipe(Effect.repeat(Schedule.spaced(Duration.seconds(1))))
    }).pipe(Effect.onInterrupt(() => Effect.logInfo("job event feed stopped on this process")))
  )
}
