/**
 * Issue 26: a job's `prompt` (names and terms for the model, Whisper's previous-text prompt) and
 * `task` (`transcribe`, or `translate` into English). Rows from before transcribe without a prompt.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE jobs ADD COLUMN prompt text`
  yield* sql`ALTER TABLE jobs ADD COLUMN task text NOT NULL DEFAULT 'transcribe'`
})
