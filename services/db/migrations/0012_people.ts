/**
 * People on the website (issue 23): an account may hold a password (scrypt, see
 * services/people/Passwords.ts) and a role. `owner` is the installation's first sign-up; the
 * partial unique index makes "at most one owner" a database rule, so two concurrent first
 * sign-ups cannot both become owner. Sessions store only hashes of their secrets (the cookie
 * token and the `vbs_` access token); invites store only the hash of their token.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE accounts
    ADD COLUMN password_hash text,
    ADD COLUMN role text NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'member'))`
  yield* sql`CREATE UNIQUE INDEX accounts_one_owner ON accounts (role) WHERE role = 'owner'`
  yield* sql`CREATE TABLE sessions (
    id text PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    access_hash text NOT NULL UNIQUE,
    csrf_token text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX sessions_account ON sessions (account_id)`
  yield* sql`CREATE TABLE invites (
    id uuid PRIMARY KEY,
    email text NOT NULL,
    token_hash text NOT NULL UNIQUE,
    invited_by uuid REFERENCES accounts (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  )`
  yield* sql`CREATE INDEX invites_email ON invites (email)`
})
