/**
 * `tasks.progress_at`: when a running attempt last showed progress, apart from `heartbeat_at`
 * (its lease, beaten by the engine as long as the process lives). A kind that watches progress
 * (transcription) is given up as stalled when its attempt stops reporting progress for
 * `stallAfter` although its process still beats the lease: an ONNX run that hangs in a worker
 * thread leaves the main thread free to beat, so the lease alone cannot see it.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tasks ADD COLUMN progress_at timestamptz`
  yield* sql`UPDATE tasks SET progress_at = heartbeat_at WHERE status = 'running'`
})
