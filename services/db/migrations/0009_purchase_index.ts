/**
 * `/v1/me` tells whether an account ever bought minutes (`EXISTS … kind = 'purchase'`). With only
 * the account index, that scans every ledger entry of a free account, which grows with each job
 * it runs; a partial index over purchases answers it from the few rows that are purchases.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX ledger_account_purchases ON ledger (account_id) WHERE kind = 'purchase'`
})
