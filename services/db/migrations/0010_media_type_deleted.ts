/**
 * `jobs.media_type`: the type a job's stored media is served with (playback links), sniffed
 * from the bytes when the media is accepted. The declared `content_type` stays as sent (often
 * `application/octet-stream`); rows from before this column have NULL and are sniffed on their
 * first playback. The partial index serves the list of an account's restorable deleted jobs.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE jobs ADD COLUMN media_type text`
  yield* sql`CREATE INDEX jobs_account_deleted ON jobs (account_id, deleted_at DESC, id DESC) WHERE deleted_at IS NOT NULL`
})
