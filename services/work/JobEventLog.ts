/**
 * The job event outbox: "finished", "changed", "deleted", "restored", "purged", appended
 * by the job stores inside the transaction that makes the change, so an event exists if
 * and only if the change was committed — a crash between a job's completion and its
 * consumers loses nothing. Consumers read it in order through `JobEventFeed`, each from
 * its own cursor.
 *
 * Order is commit-safe, not just insertion order. `seq` comes from a sequence when the row is
 * inserted, so on Postgres with several connections a transaction can take seq 7, another take
 * seq 8 and commit first; a reader following `seq > position` would pass 8 and never see 7.
 * Each row therefore records its transaction (`txid`, `pg_current_xact_id()`), and `after`
 * returns only rows whose transaction is older than the oldest transaction still running
 * (the snapshot's oldest running transaction, `pg_snapshot_xip`, counting only this database's:
 * another database's rows are never in this table): every such transaction has committed or rolled
 * back, so no row can appear any more at or below that horizon, and reading in (txid, seq) order
 * from a (txid, seq) cursor never steps over a row that commits later. Chosen over a re-read
 * window (which needs per-event delivery marks and a window guess) and over a table lock on
 * append (which would serialize every job-ending transaction): it costs nothing on the write
 * path and works the same on PGlite (one connection, so the horizon is simply "committed")
 * and Postgres (xid8 and the snapshot functions exist since 13). The price: an event waits
 * while any older transaction on this database is still open, so a transaction left open for
 * minutes (an idle-in-transaction session) delays the feed by as much, and loses nothing.
 * Other databases on the same server (other applications, CI's parallel test files) do not
 * hold it back: their running transactions are told apart through pg_stat_activity.
 */
import { Array as Arr, Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { AccountId, JobId } from "../../src/contract/domain/Ids.ts"
import { numbersFromBigInt } from "../db/BigIntColumns.ts"

export const JobEventType = Schema.Literals(["finished", "changed", "deleted", "restored", "purged"])
export type JobEventType = typeof JobEventType.Type

export const JobEvent = Schema.Struct({
  seq: Schema.Number,
  /** The appending transaction (xid8 as decimal text): the first half of the feed's order. */
  txid: Schema.String,
  job_id: JobId,
  account_id: Schema.NullOr(AccountId),
  type: JobEventType,
  created_at: Schema.Date
})
export type JobEvent = typeof JobEvent.Type

/** A cursor: everything at or before (txid, seq) has been read. The start is ("0", 0). */
export interface EventPosition {
  readonly txid: string
  readonly seq: number
}

const decodeEvents = Schema.decodeUnknownEffect(Schema.Array(JobEvent))

export class JobEventLog extends Context.Service<JobEventLog, {
  /** Appends one event per job; joins the caller's transaction (call it inside the one making the change). */
  append(type: JobEventType, jobs: ReadonlyArray<{ readonly id: JobId; readonly account_id: AccountId | null }>): Effect.Effect<void>
  /**
   * Events after `position` in (txid, seq) order whose transaction is older than every
   * transaction still running (see the module comment): a later call never returns an
   * event that sorts at or before the last one returned.
   */
  after(position: EventPosition, limit: number): Effect.Effect<ReadonlyArray<JobEvent>>
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
      const after = Effect.fn("JobEventLog.after")(function*(position: EventPosition, limit: number) {
        // The horizon: the oldest transaction of the statement's snapshot still running, leaving
        // out those pg_stat_activity names as another database's (compared on the low 32 bits,
        // which is what backend_xid shows). A transaction whose database cannot be told (it
        // committed since the snapshot, a prepared one, a hidden field) still counts.
        const rows = yield* sql`SELECT seq, txid::text AS txid, job_id, account_id, type, created_at FROM job_events
          WHERE (txid, seq) > (${position.txid}::xid8, ${position.seq})
            AND txid < (SELECT COALESCE(min(running.xid), pg_snapshot_xmax(pg_current_snapshot()))
              FROM pg_snapshot_xip(pg_current_snapshot()) AS running(xid)
              WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity AS other
                WHERE other.datid IS DISTINCT FROM (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND other.backend_xid::text = (running.xid::text::numeric % 4294967296)::text))
          ORDER BY txid, seq LIMIT ${limit}`.pipe(Effect.orDie)
        return yield* decodeEvents(rows.map(numbersFromBigInt)).pipe(Effect.orDie)
      })
      return JobEventLog.of({ append, after })
    })
  )
}
