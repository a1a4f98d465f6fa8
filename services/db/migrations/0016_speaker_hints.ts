/**
 * Issue 26: a job's speaker hints (`min_speakers` / `max_speakers`, or `speakers_expected` for
 * both), which bound the number of speakers diarization finds. Null: no bound (rows from before).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE jobs ADD COLUMN min_speakers integer`
  yield* sql`ALTER TABLE jobs ADD COLUMN max_speakers integer`
})
