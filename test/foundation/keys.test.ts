/**
 * Key lifecycle on the real database with a controlled clock: shown once and stored as a
 * hash, the ten-key cap, rotation's 24-hour overlap, immediate revocation.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../services/Accounts.ts"
import { ApiKeys, hashKey } from "../../services/ApiKeys.ts"
import { controlledClock } from "../support/clock.ts"
import { domainTestLayer } from "../support/domain.ts"

let counter = 0
const newAccount = Effect.gen(function*() {
  const accounts = yield* Accounts
  const account = yield* accounts.create(`keys${++counter}@example.com`)
  return yield* accounts.grantApiAccess(account.id)
})

layer(domainTestLayer("keys"), { timeout: 60_000, excludeTestServices: true })("API keys", (it) => {
  it.effect("stores only a hash of the key and authenticates by it", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const sql = yield* SqlClient.SqlClient
      const account = yield* newAccount
      const issued = yield* keys.create(account.id, "ci")
      assert.match(issued.key, /^vb_[A-Za-z0-9_-]{32}$/)
      const stored = yield* sql<{ hash: string; prefix: string }>`SELECT hash, prefix FROM api_keys WHERE id = ${issued.record.id}`
      assert.strictEqual(stored[0]!.hash, hashKey(issued.key))
      assert.notInclude(JSON.stringify(stored), issued.key)
      assert.strictEqual(stored[0]!.prefix, issued.key.slice(0, 11))
      const found = yield* keys.authenticate(issued.key)
      assert.strictEqual(Option.getOrThrow(found).accountId, account.id)
      assert.isTrue(Option.isNone(yield* keys.authenticate(issued.key + "x")))
    }))

  it.effect("refuses keys to an account without API access", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const account = yield* (yield* Accounts).create(`noaccess${++counter}@example.com`)
      const refused = yield* Effect.flip(keys.create(account.id))
      assert.strictEqual(refused._tag, "ApiAccessRequired")
      assert.match(refused.message, /team-monthly|Workspace/)
      // A subscription plan brings API access.
      yield* (yield* Accounts).setPlan(account.id, "workspace")
      yield* keys.create(account.id)
    }))

  it.effect("allows ten active keys and refuses the eleventh", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const account = yield* newAccount
      for (let i = 0; i < 10; i++) yield* keys.create(account.id)
      const refused = yield* Effect.flip(keys.create(account.id))
      assert.strictEqual(refused._tag, "TooManyKeys")
      // Revoking one frees a place.
      const [first] = yield* keys.list(account.id)
      yield* keys.revoke(account.id, first!.id)
      yield* keys.create(account.id)
      assert.strictEqual((yield* Effect.flip(keys.create(account.id)))._tag, "TooManyKeys")
    }))

  it.effect("refuses the eleventh key even when requests race", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const account = yield* newAccount
      const results = yield* Effect.all(
        Array.from({ length: 14 }, () => Effect.result(keys.create(account.id))),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.filter((r) => r._tag === "Success").length, 10)
      assert.strictEqual((yield* keys.list(account.id)).length, 10)
    }))

  it.effect("keeps a rotated key valid for 24 hours, then refuses it", () =>
    Effect.gen(function*() {
      const clock = controlledClock(Date.UTC(2026, 0, 1))
      const keys = yield* ApiKeys
      const account = yield* newAccount
      const old = yield* clock.at(keys.create(account.id))
      const replacement = yield* clock.at(keys.rotate(account.id, old.record.prefix))
      assert.notStrictEqual(replacement.key, old.key)
      assert.isTrue(Option.isSome(yield* clock.at(keys.authenticate(old.key))))
      assert.isTrue(Option.isSome(yield* clock.at(keys.authenticate(replacement.key))))
      clock.advance(Duration.minutes(24 * 60 - 1))
      assert.isTrue(Option.isSome(yield* clock.at(keys.authenticate(old.key))))
      clock.advance(Duration.minutes(2))
      assert.isTrue(Option.isNone(yield* clock.at(keys.authenticate(old.key))))
      assert.isTrue(Option.isSome(yield* clock.at(keys.authenticate(replacement.key))))
      // An expired key can no longer be rotated or revoked.
      assert.strictEqual((yield* Effect.flip(clock.at(keys.rotate(account.id, old.record.id))))._tag, "KeyNotFound")
    }))

  it.effect("does not count keys in their rotation overlap against the cap", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const account = yield* newAccount
      const created = []
      for (let i = 0; i < 10; i++) created.push(yield* keys.create(account.id))
      yield* keys.rotate(account.id, created[0]!.record.id)
      const listed = yield* keys.list(account.id)
      assert.strictEqual(listed.length, 11)
      assert.strictEqual((yield* Effect.flip(keys.create(account.id)))._tag, "TooManyKeys")
    }))

  it.effect("rotating one key again and again never takes the account past ten active keys", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const account = yield* newAccount
      const activeCount = Effect.map(keys.list(account.id), (listed) =>
        listed.filter((key) => key.revoked_at === null && key.expires_at === null).length)
      const first = yield* keys.create(account.id)
      const outcomes = []
      for (let i = 0; i < 14; i++) outcomes.push(yield* Effect.result(keys.rotate(account.id, first.record.id)))
      assert.strictEqual(yield* activeCount, 10)
      assert.strictEqual(outcomes.filter((outcome) => outcome._tag === "Success").length, 10)
      const refused = outcomes.at(-1)!
      assert.isTrue(refused._tag === "Failure" && refused.failure._tag === "TooManyKeys")
      // A full account can still rotate an active key: the old one leaves the count as the new one joins.
      const full = yield* newAccount
      const created = []
      for (let i = 0; i < 10; i++) created.push(yield* keys.create(full.id))
      yield* keys.rotate(full.id, created[3]!.record.id)
      assert.strictEqual((yield* Effect.flip(keys.rotate(full.id, created[3]!.record.id)))._tag, "TooManyKeys")
    }))

  it.effect("revokes at once", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const account = yield* newAccount
      const issued = yield* keys.create(account.id)
      assert.isTrue(Option.isSome(yield* keys.authenticate(issued.key)))
      const revoked = yield* keys.revoke(account.id, issued.record.prefix)
      assert.isNotNull(revoked.revoked_at)
      assert.isTrue(Option.isNone(yield* keys.authenticate(issued.key)))
      assert.strictEqual((yield* Effect.flip(keys.revoke(account.id, issued.record.id)))._tag, "KeyNotFound")
    }))

  it.effect("authenticates with the key's account as stored now, in one query", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const accounts = yield* Accounts
      const account = yield* newAccount
      const issued = yield* keys.create(account.id)
      const found = Option.getOrThrow(yield* keys.authenticate(issued.key))
      assert.strictEqual(found.keyId, issued.record.id)
      assert.deepStrictEqual(found.account, account)
      // A plan change shows on the next request: the account is read with the key, not kept.
      const changed = yield* accounts.setPlan(account.id, "enterprise")
      assert.strictEqual(Option.getOrThrow(yield* keys.authenticate(issued.key)).account.plan, "enterprise")
      assert.deepStrictEqual(Option.getOrThrow(yield* keys.authenticate(issued.key)).account, changed)
    }))

  it.effect("writes a key's last use at most once a minute", () =>
    Effect.gen(function*() {
      const clock = controlledClock(Date.UTC(2026, 1, 1))
      const keys = yield* ApiKeys
      const sql = yield* SqlClient.SqlClient
      const account = yield* newAccount
      const issued = yield* clock.at(keys.create(account.id))
      const lastUsed = Effect.map(
        sql<{ last_used_at: Date | null }>`SELECT last_used_at FROM api_keys WHERE id = ${issued.record.id}`,
        (rows) => rows[0]!.last_used_at?.getTime() ?? null
      )
      assert.strictEqual(yield* lastUsed, null)
      yield* clock.at(keys.authenticate(issued.key))
      const first = clock.now
      assert.strictEqual(yield* lastUsed, first)
      clock.advance(Duration.seconds(59))
      yield* clock.at(keys.authenticate(issued.key))
      assert.strictEqual(yield* lastUsed, first)
      clock.advance(Duration.seconds(2))
      yield* clock.at(keys.authenticate(issued.key))
      assert.strictEqual(yield* lastUsed, clock.now)
      // A refused key is not touched.
      yield* keys.revoke(account.id, issued.record.id)
      clock.advance(Duration.minutes(5))
      assert.isTrue(Option.isNone(yield* clock.at(keys.authenticate(issued.key))))
      assert.strictEqual(yield* lastUsed, clock.now - 5 * 60_000)
    }))

  it.effect("never touches another account's keys", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const owner = yield* newAccount
      const stranger = yield* newAccount
      const issued = yield* keys.create(owner.id)
      assert.strictEqual((yield* Effect.flip(keys.revoke(stranger.id, issued.record.id)))._tag, "KeyNotFound")
      assert.strictEqual((yield* Effect.flip(keys.rotate(stranger.id, issued.record.prefix)))._tag, "KeyNotFound")
      assert.isTrue(Option.isSome(yield* keys.authenticate(issued.key)))
    }))
})
