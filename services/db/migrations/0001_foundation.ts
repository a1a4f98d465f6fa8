/**
 * Accounts, API keys, rate-limit state, counters, instance settings and the credit ledger.
 * Times are stored as `timestamptz` but always written from the application clock, so
 * tests that control the clock see consistent expiry; only Postgres 15 features are used.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE accounts (
    id uuid PRIMARY KEY,
    email text NOT NULL UNIQUE,
    plan text NOT NULL DEFAULT 'standard',
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE api_keys (
    id uuid PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name text,
    prefix text NOT NULL,
    hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    last_used_at timestamptz,
    replaced_by uuid REFERENCES api_keys (id)
  )`
  yield* sql`CREATE INDEX api_keys_account ON api_keys (account_id)`
  // GCRA state: one row per limited bucket, `tat` = theoretical arrival time in ms.
  yield* sql`CREATE TABLE rate_limits (
    bucket text PRIMARY KEY,
    tat bigint NOT NULL
  )`
  // Fixed-window counters (daily sample quota and the like).
  yield* sql`CREATE TABLE usage_counters (
    bucket text NOT NULL,
    window_start bigint NOT NULL,
    count integer NOT NULL,
    PRIMARY KEY (bucket, window_start)
  )`
  yield* sql`CREATE TABLE instance_settings (
    key text PRIMARY KEY,
    value text NOT NULL
  )`
  // Append-only: a balance is always a sum over this table. `ref` makes an entry
  // idempotent per kind (one charge per job, one credit per payment).
  yield* sql`CREATE TABLE ledger (
    id bigserial PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind text NOT NULL,
    minutes numeric(14, 4) NOT NULL,
    ref text,
    note text,
    created_at timestamptz NOT NULL,
    UNIQUE (kind, ref)
  )`
  yield* sql`CREATE INDEX ledger_account ON ledger (account_id)`
})
