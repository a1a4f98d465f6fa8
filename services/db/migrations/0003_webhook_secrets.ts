/** Each account signs its webhook deliveries with a secret of its own (Standard Webhooks `whsec_`). */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE accounts ADD COLUMN webhook_secret text`
})
