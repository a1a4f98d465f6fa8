/**
 * The job event outbox: "finished", "changed", "deleted", "restored", "purged", appended
 * by the job stores inside the transaction that makes the change, so an event exists if
 * and only if the change was committed — a crash between a job's completion and its
 * consumers loses nothing. Consumers read it in order through `JobEventFeed`, each from
 * its own cursor.
 */
import { Array as Arr, Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { AccountId, JobId } from "../../src/contract/domain/Ids.ts"
import { numbersFromBigInt } from "../db/BigIntColumns.ts"

export const JobEventType = Schema.Literals(["finished", "changed", "deleted", "restored", "purged"])
export type JobEventType = typeof JobEventType.Type

export const JobEvent = Schema.Struct({
  seq: Schema.Number,
  job_id: JobId,
  account_id: Schema.NullOr(AccountId),
  type: JobEventType,
  created_at: Schema.Date
})
export type JobEvent = typeof JobEvent.Type

const decodeEvents = Schema.decodeUnknownEffect(Schema.Array(JobEvent))

export class JobEventLog extends Context.Service<JobEventLog, {
  /** Appends one event per job; joins the caller's transaction (call it inside the one making the change). */
  append(type: JobEventType, jobs: ReadonlyArray<{ readonly id: JobId; readonly account_id: AccountId | null }>): Effect.Effect<void>
  /** Events after `position`, oldest first. */
  after(position: number, limit: number): Effect.Effect<ReadonlyArray<JobEvent>>
}>()("verbatim/work/JobEventLog") {
  static readonly layer = Layer.effect(
    JobEventLog,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const append = Effect.fn("JobEventLog.append")(function*(
        type: JobEventType,
        jobs: ReadonlyArray<{ readonly id: JobId; readonly account_id: AccountId | null }>
      ) {
        const at = new Date(yield* Clock.currentTimeMillis)
        const rows = jobs.map((job) => ({ job_id: job.id, account_id: job.account_id, type, created_at: at }))
        if (!Arr.isArrayNonEmpty(rows)) return
        yield* sql`INSERT INTO job_events ${sql.insert(rows)}`.pipe(Effect.orDie)
      })
      const after = Effect.fn("JobEventLog.after")(function*(position: number, limit: number) {
        const rows = yield* sql`SELECT seq, job_id, account_id, type, created_at FROM job_events
          WHERE seq > ${position} ORDER BY seq LIMIT ${limit}`.pipe(Effect.orDie)
        return yield* decodeEvents(rows.map(numbersFromBigInt)).pipe(Effect.orDie)
      })
      return JobEventLog.of({ append, after })
    })
  )
}
