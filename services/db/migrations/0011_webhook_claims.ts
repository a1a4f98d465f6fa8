/**
 * Webhook deliveries are claimed before they are sent, so several processes (or overlapping
 * passes in one) never send the same delivery at once. `claim` names the pass holding the
 * delivery; `claimed_until` is when that claim lapses if the pass never records its outcome
 * (a crashed process), making the delivery due again.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_deliveries ADD COLUMN claim uuid, ADD COLUMN claimed_until timestamptz`
})
