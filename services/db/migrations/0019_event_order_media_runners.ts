/**
 * Two things several processes on one Postgres need:
 *
 * - `job_events.txid`: the transaction that appended the event (`pg_current_xact_id()`). A
 *   `bigserial` hands out `seq` when a row is inserted, not when it commits, so a reader that
 *   follows `seq > position` skips for good an event whose transaction took a lower `seq` and
 *   committed after a higher one. The feed now reads in (txid, seq) order and only events whose
 *   transaction is older than every transaction still running (`pg_snapshot_xmin`), so none can
 *   still commit behind its cursor (services/work/JobEventLog.ts). Cursors gain `position_txid`.
 *   Existing rows all take xid 3 (the first normal transaction id, older than any real one), and
 *   so do existing cursors: a cursor at (3, p) has passed exactly the events it had passed before
 *   (seq <= p). Not this migration's own xid: during a rolling upgrade an older process's
 *   transaction may hold a lower xid and append its event after this commits; that event must
 *   sort after the cursor, not before it.
 * - `media_runners`: each running service process registers here with the marker file it wrote
 *   in its media directory, so a process starting with a directory that does not hold the
 *   others' markers refuses to start (services/storage/SharedMedia.ts).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE job_events ADD COLUMN txid xid8 NOT NULL DEFAULT '3'`
  yield* sql`ALTER TABLE job_events ALTER COLUMN txid SET DEFAULT pg_current_xact_id()`
  yield* sql`CREATE INDEX job_events_commit_order ON job_events (txid, seq)`
  yield* sql`ALTER TABLE job_event_cursors ADD COLUMN position_txid xid8 NOT NULL DEFAULT '0'`
  yield* sql`UPDATE job_event_cursors SET position_txid = '3'`
  yield* sql`CREATE TABLE media_runners (
    runner_id uuid PRIMARY KEY,
    host text NOT NULL,
    media_dir text NOT NULL,
    started_at timestamptz NOT NULL,
    seen_at timestamptz NOT NULL
  )`
})
