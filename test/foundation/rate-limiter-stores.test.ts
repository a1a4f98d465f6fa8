/**
 * The two rate stores (services/RateLimiter.ts) decide alike: the in-memory GCRA, used when
 * this process owns the embedded database, against the `rate_limits` table on the same
 * script of requests and clock; which store `RateLimiter.layer` picks; the memory store's
 * pruning of buckets whose budget is whole again.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { EmbeddedPostgres } from "../../services/db/EmbeddedPostgres.ts"
import { makeMemoryGcra, type RateDecision, RateLimiter } from "../../services/RateLimiter.ts"
import { controlledClock } from "../support/clock.ts"
import { onPostgres } from "../support/database.ts"
import { domainTestLayer } from "../support/domain.ts"

let counter = 0
const fresh = (label: string) => `test:${label}:${++counter}:${Date.now()}`

/** Each step: advance the clock by `afterMs`, then one request against `bucket` at `limit`. */
type Step = { readonly afterMs: number; readonly bucket: "a" | "b"; readonly limit: number }

const script: ReadonlyArray<Step> = [
  // A burst of the whole budget, the refusal after it, and one more every interval.
  ...Array.from({ length: 6 }, () => ({ afterMs: 0, bucket: "a" as const, limit: 5 })),
  { afterMs: 11_999, bucket: "a", limit: 5 },
  { afterMs: 1, bucket: "a", limit: 5 },
  { afterMs: 0, bucket: "a", limit: 5 },
  // Another bucket is unaffected.
  { afterMs: 0, bucket: "b", limit: 5 },
  // A long pause gives the whole budget back, not more.
  ...Array.from({ length: 6 }, (_, i) => ({ afterMs: i === 0 ? 300_000 : 0, bucket: "a" as const, limit: 5 })),
  // An interval that does not divide a minute (60 000 / 7 rounded up).
  ...Array.from({ length: 9 }, (_, i) => ({ afterMs: i === 8 ? 8_572 : 0, bucket: "b" as const, limit: 7 }))
]

const run = (steps: ReadonlyArray<Step>, label: string) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimiter
    const clock = controlledClock(Date.UTC(2026, 2, 1))
    const buckets = { a: fresh(`${label}-a`), b: fresh(`${label}-b`) }
    const decisions: Array<RateDecision> = []
    for (const step of steps) {
      clock.advance(step.afterMs)
      decisions.push(yield* clock.at(limiter.consume(buckets[step.bucket], step.limit)))
    }
    return decisions
  })

const rowsFor = (prefix: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM rate_limits WHERE bucket LIKE ${prefix + "%"}`
    return row!.n
  })

layer(domainTestLayer("rate-stores"), { timeout: 60_000, excludeTestServices: true })("rate stores", (it) => {
  it.effect("the memory store and the table decide the same script alike", () =>
    Effect.gen(function*() {
      const inMemory = yield* run(script, "memory").pipe(Effect.provide(RateLimiter.memory))
      const inTable = yield* run(script, "table").pipe(Effect.provide(RateLimiter.postgres))
      assert.deepStrictEqual(inMemory, inTable)
      const allowed = inMemory.map((decision) => decision.allowed)
      assert.deepStrictEqual(allowed.slice(0, 6), [true, true, true, true, true, false])
      // 11.999 s after the burst the first slot is not back yet; 1 ms later it is, once.
      assert.deepStrictEqual(allowed.slice(6, 10), [false, true, false, true])
      assert.deepStrictEqual(allowed.slice(10, 16), [true, true, true, true, true, false])
      // The interval rounds up (8 572 ms), so 7 a minute lets 6 through at once: both stores,
      // as the table always did.
      assert.deepStrictEqual(allowed.slice(16), [true, true, true, true, true, true, false, false, true])
      assert.deepStrictEqual(inMemory[5], { allowed: false, retryAfterSeconds: 12 })
      assert.deepStrictEqual(inMemory[6], { allowed: false, retryAfterSeconds: 1 })
    }))

  it.effect("counts in memory when this process owns the embedded database, in the table otherwise", () =>
    Effect.gen(function*() {
      const owner = EmbeddedPostgres.of({ socketPath: "/nonexistent", owner: true })
      const visitor = EmbeddedPostgres.of({ socketPath: "/nonexistent", owner: false })
      const withOwner = Layer.fresh(RateLimiter.layer).pipe(Layer.provide(Layer.succeed(EmbeddedPostgres, owner)))
      const withVisitor = Layer.fresh(RateLimiter.layer).pipe(Layer.provide(Layer.succeed(EmbeddedPostgres, visitor)))
      const prefix = fresh("choice")
      yield* (yield* RateLimiter).consume(`${prefix}:ambient`, 5)
      yield* RateLimiter.use((limiter) => limiter.consume(`${prefix}:owner`, 5)).pipe(Effect.provide(withOwner))
      assert.strictEqual(yield* rowsFor(`${prefix}:owner`), 0)
      yield* RateLimiter.use((limiter) => limiter.consume(`${prefix}:visitor`, 5)).pipe(Effect.provide(withVisitor))
      assert.strictEqual(yield* rowsFor(`${prefix}:visitor`), 1)
      // The service's own: memory on the embedded database this test file owns, the table on a
      // Postgres server (no EmbeddedPostgres at all).
      assert.strictEqual(yield* rowsFor(`${prefix}:ambient`), onPostgres ? 1 : 0)
    }))
})

layer(Layer.empty)("memory store", (it) => {
  it.effect("forgets buckets whose budget is whole again once it holds many", () =>
    Effect.sync(() => {
      const gcra = makeMemoryGcra()
      const start = Date.UTC(2026, 2, 1)
      for (let i = 0; i < 10_001; i++) gcra.consume(`ip:${i}`, 60, start)
      assert.strictEqual(gcra.size(), 10_001)
      // Still within their interval: nothing can be dropped.
      gcra.consume("ip:late", 60, start + 999)
      assert.strictEqual(gcra.size(), 10_002)
      // A second later every earlier bucket is whole again and goes; the one just used stays.
      gcra.consume("ip:later", 60, start + Duration.toMillis(Duration.seconds(2)))
      assert.strictEqual(gcra.size(), 1)
      // A refused bucket keeps its state (the refusal is still counted from it).
      for (let i = 0; i < 61; i++) gcra.consume("ip:busy", 60, start + 3_000)
      assert.deepStrictEqual(gcra.consume("ip:busy", 60, start + 3_000), { allowed: false, retryAfterSeconds: 1 })
    }))
})
