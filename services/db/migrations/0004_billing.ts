/** Billing: API access and subscription period on accounts, checkout records, lock facts on jobs. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE accounts ADD COLUMN api_access boolean NOT NULL DEFAULT false`
  yield* sql`ALTER TABLE accounts ADD COLUMN plan_expires_at timestamptz`
  yield* sql`ALTER TABLE jobs ADD COLUMN charged_minutes numeric(14, 4)`
  yield* sql`CREATE TABLE checkouts (
    id text PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    sku text NOT NULL,
    amount_usd numeric(10, 2) NOT NULL,
    minutes integer NOT NULL,
    status text NOT NULL,
    provider text NOT NULL,
    provider_ref text,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    paid_at timestamptz
  )`
  yield* sql`CREATE INDEX checkouts_account_created ON checkouts (account_id, created_at DESC)`
  // One open link per account and sku (the same sku asked again returns it).
  yield* sql`CREATE UNIQUE INDEX checkouts_one_pending ON checkouts (account_id, sku) WHERE status = 'pending'`
})
