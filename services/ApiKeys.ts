/**
 * API keys: shown once at creation, stored only as a SHA-256 hash (keys carry 192 random
 * bits, so a slow hash buys nothing and would cost every request). At most ten active
 * keys per account; a rotated key stays valid for 24 hours beside its replacement and
 * does not count against the cap meanwhile; a revoked key stops at once.
 */
import { Clock, Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { createHash, randomBytes } from "node:crypto"
import { type ApiKeyRecord, ApiKeyRecord as ApiKeyRecordSchema, keyStatus } from "../src/contract/domain/ApiKey.ts"
import { Account } from "../src/contract/domain/Account.ts"
import type { AccountId, ApiKeyId } from "../src/contract/domain/Ids.ts"

export const maxActiveKeys = 10
export const rotationOverlap = Duration.hours(24)

export class TooManyKeys extends Schema.TaggedError<TooManyKeys>()("TooManyKeys", {
  accountId: Schema.String,
  limit: Schema.Int
}) {
  override get message() {
    return `The account already has ${this.limit} active keys; revoke one before creating another.`
  }
}

/** Keys come with the 5,000-minute pack or the Workspace plan (spec, Authentication 3). */
export class ApiAccessRequired extends Schema.TaggedError<ApiAccessRequired>()("ApiAccessRequired", {
  accountId: Schema.String
}) {
  override get message() {
    return "This account has no API access: it comes with the team-monthly pack (5,000 minutes) or the " +
      "Workspace plan. Buy one (POST /v1/checkout) or ask the operator (admin access grant)."
  }
}

export class KeyNotFound extends Schema.TaggedError<KeyNotFound>()("KeyNotFound", {
  lookup: Schema.String
}) {
  override get message() {
    return `No usable key matches ${this.lookup}.`
  }
}

export interface IssuedKey {
  /** The secret. Shown to the operator once; never stored. */
  readonly key: string
  readonly record: ApiKeyRecord
}

export interface AuthenticatedKey {
  readonly keyId: ApiKeyId
  readonly accountId: AccountId
  /** The key's account as stored now (read in the same query). */
  readonly account: Account
}

export const hashKey = (key: string) => createHash("sha256").update(key).digest("hex")
const newSecret = () => `vb_${randomBytes(24).toString("base64url")}`
const prefixOf = (key: string) => key.slice(0, 11)

const columns = "id, account_id, name, prefix, created_at, expires_at, revoked_at, last_used_at"
const decodeRecord = Schema.decodeUnknownEffect(ApiKeyRecordSchema)
const accountColumns = "a.id, a.email, a.plan, a.plan_expires_at, a.api_access, a.created_at"
const decodeAccount = Schema.decodeUnknownEffect(Account)
type AccountRow = { readonly [K in keyof Account]: unknown }
/** Last use is a hint for operators, written at most this often per key. */
const lastUseEveryMs = 60_000

export class ApiKeys extends Context.Service<ApiKeys, {
  create(accountId: AccountId, name?: string): Effect.Effect<IssuedKey, TooManyKeys | ApiAccessRequired>
  list(accountId: AccountId): Effect.Effect<ReadonlyArray<ApiKeyRecord>>
  /** Issues a replacement; the old key keeps working for 24 hours. Accepts an id or prefix. */
  rotate(accountId: AccountId, idOrPrefix: string): Effect.Effect<IssuedKey, KeyNotFound | TooManyKeys>
  revoke(accountId: AccountId, idOrPrefix: string): Effect.Effect<ApiKeyRecord, KeyNotFound>
  /** None for unknown, revoked and expired keys alike: callers must not learn which. One query. */
  authenticate(key: string): Effect.Effect<Option.Option<AuthenticatedKey>>
}>()("verbatim/accounts/ApiKeys") {
  static readonly layer = Layer.effect(
    ApiKeys,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decodeRows = (rows: ReadonlyArray<unknown>) => Effect.forEach(rows, (row) => decodeRecord(row)).pipe(Effect.orDie)

      const insertKey = (accountId: AccountId, name: string | null, now: Date) =>
        Effect.gen(function*() {
          const key = newSecret()
          const rows = yield* sql.unsafe(
            `INSERT INTO api_keys (id, account_id, name, prefix, hash, created_at)
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${columns}`,
            [crypto.randomUUID(), accountId, name, prefixOf(key), hashKey(key), now]
          )
          const [record] = yield* decodeRows(rows)
          return { key, record: record! } satisfies IssuedKey
        })

      const findUsable = (accountId: AccountId, idOrPrefix: string, now: Date) =>
        Effect.gen(function*() {
          const rows = yield* sql.unsafe(
            `SELECT ${columns} FROM api_keys
             WHERE account_id = $1 AND (id::text = $2 OR prefix = $2)
               AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
             FOR UPDATE`,
            [accountId, idOrPrefix, now]
          )
          const [record] = yield* decodeRows(rows)
          if (record === undefined) return yield* new KeyNotFound({ lookup: idOrPrefix })
          return record
        })

      /**
       * Locks the account row (serialising key issue per account, so two concurrent requests
       * cannot both pass the cap check) and fails when `adding` more active keys would pass the cap.
       */
      const reserveActive = (accountId: AccountId, adding: number) =>
        Effect.gen(function*() {
          yield* sql`SELECT 1 FROM accounts WHERE id = ${accountId} FOR UPDATE`
          const [row] = yield* sql<{ active: number }>`SELECT count(*)::int AS active FROM api_keys
            WHERE account_id = ${accountId} AND revoked_at IS NULL AND expires_at IS NULL`
          if ((row?.active ?? 0) + adding > maxActiveKeys) {
            return yield* new TooManyKeys({ accountId, limit: maxActiveKeys })
          }
        })

      const create = Effect.fn("ApiKeys.create")(function*(accountId: AccountId, name?: string) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          const [owner] = yield* sql<{ api_access: boolean }>`SELECT api_access FROM accounts WHERE id = ${accountId} FOR UPDATE`
          if (owner?.api_access !== true) return yield* new ApiAccessRequired({ accountId })
          yield* reserveActive(accountId, 1)
          return yield* insertKey(accountId, name ?? null, now)
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const list = Effect.fn("ApiKeys.list")(function*(accountId: AccountId) {
        const rows = yield* sql.unsafe(
          `SELECT ${columns} FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`,
          [accountId]
        ).pipe(Effect.orDie)
        return yield* decodeRows(rows)
      })

      const rotate = Effect.fn("ApiKeys.rotate")(function*(accountId: AccountId, idOrPrefix: string) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const nowMs = yield* Clock.currentTimeMillis
          const now = new Date(nowMs)
          const old = yield* findUsable(accountId, idOrPrefix, now)
          // The replacement is a new active key; the old one leaves the count only if it was
          // still active (a key already in its overlap does not count), so rotating one key
          // over and over cannot pass the cap.
          yield* reserveActive(accountId, old.expires_at === null ? 0 : 1)
          const issued = yield* insertKey(accountId, old.name, now)
          const overlapEnd = new Date(nowMs + Duration.toMillis(rotationOverlap))
          // A key already rotating keeps its earlier end: rotating twice never extends it.
          yield* sql`UPDATE api_keys
            SET expires_at = LEAST(COALESCE(expires_at, ${overlapEnd}), ${overlapEnd}), replaced_by = ${issued.record.id}
            WHERE id = ${old.id}`
          return issued
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const revoke = Effect.fn("ApiKeys.revoke")(function*(accountId: AccountId, idOrPrefix: string) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          const key = yield* findUsable(accountId, idOrPrefix, now)
          const rows = yield* sql.unsafe(
            `UPDATE api_keys SET revoked_at = $2 WHERE id = $1 RETURNING ${columns}`,
            [key.id, now]
          )
          return (yield* decodeRows(rows))[0]!
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const authenticate = Effect.fn("ApiKeys.authenticate")(function*(key: string) {
        const nowMs = yield* Clock.currentTimeMillis
        const now = new Date(nowMs)
        const lastUseBefore = new Date(nowMs - lastUseEveryMs)
        // One round trip per request: the key, its account, and the last-use hint (written at
        // most once a minute per key; the CTE's update runs whether or not its rows are read).
        const rows = yield* sql<AccountRow & { key_id: ApiKeyId }>`
          WITH usable AS (
            SELECT id, account_id, last_used_at FROM api_keys
            WHERE hash = ${hashKey(key)} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${now})
          ), touched AS (
            UPDATE api_keys SET last_used_at = ${now}
            WHERE id IN (SELECT id FROM usable WHERE last_used_at IS NULL OR last_used_at < ${lastUseBefore})
          )
          SELECT usable.id AS key_id, ${sql.literal(accountColumns)}
          FROM usable JOIN accounts a ON a.id = usable.account_id`.pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) return Option.none<AuthenticatedKey>()
        const account = yield* decodeAccount(row).pipe(Effect.orDie)
        return Option.some({ keyId: row.key_id, accountId: account.id, account })
      })

      return ApiKeys.of({ create, list, rotate, revoke, authenticate })
    })
  )
}

export { keyStatus }
