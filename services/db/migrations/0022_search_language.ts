/**
 * Which of an account's jobs hold passages in a language, answered from an index
 * (`SearchBackend.languageJobs`, a skip scan: one probe per job): a question is searched in
 * translation only among the jobs in the other language. Without it the probe for a language
 * the library lacks read every passage of the account.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX IF NOT EXISTS search_passages_account_language ON search_passages (account_id, language, job_id)`
})
