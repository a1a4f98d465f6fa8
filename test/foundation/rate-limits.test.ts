/**
 * Request rates: 60 a minute per account shared by all its keys (120 on enterprise),
 * `RATE_LIMITED` with `Retry-After` beyond that; the keyless sample allowance; and, on a
 * Postgres server, one limit shared by two server processes.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../services/Accounts.ts"
import { ApiKeys } from "../../services/ApiKeys.ts"
import { SampleQuota } from "../../services/SampleQuota.ts"
import { controlledClock } from "../support/clock.ts"
import { onPostgres } from "../support/database.ts"
import { runCliJson, startServerProcess } from "../support/process.ts"
import { startServer, type TestServer } from "../support/server.ts"

let server: TestServer

beforeAll(async () => {
  server = await startServer("rates", { rateLimitPerMinute: 60, enterpriseRateLimitPerMinute: 120 })
})
afterAll(async () => {
  await server?.close()
})

const burst = (count: number, headers: Record<string, string>, url = server.url) =>
  Promise.all(Array.from({ length: count }, () => fetch(`${url}/v1/me`, { headers })))

describe("per-account request rate", () => {
  it("allows 60 requests a minute across all of an account's keys, then answers 429 RATE_LIMITED", async () => {
    const owner = await server.account()
    const second = await server.run(Effect.gen(function*() {
      return yield* (yield* ApiKeys).create(owner.accountId)
    }))
    // One slot comes back every second: on a busy machine the bursts may take longer than that and
    // earn a few more, so ask one by one until the refusal, and count what passed against the clock.
    const started = Date.now()
    const first = await burst(30, { "X-API-Key": owner.key })
    const other = await burst(30, { "X-API-Key": second.key })
    expect([...first, ...other].every((r) => r.status === 200)).toBe(true)
    let extra = 0
    let limited = await server.get("/v1/me", { "X-API-Key": second.key })
    while (limited.status === 200 && extra < 30) {
      extra++
      limited = await server.get("/v1/me", { "X-API-Key": second.key })
    }
    expect(limited.status).toBe(429)
    expect(extra).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / 1000))
    const retryAfter = Number(limited.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    const body = await limited.json() as Record<string, unknown>
    expect(body).toMatchObject({ code: "RATE_LIMITED", retry_after: retryAfter })
    // Another account is unaffected.
    const stranger = await server.account()
    expect((await server.get("/v1/me", { "X-API-Key": stranger.key })).status).toBe(200)
  })

  it("allows 120 a minute on the enterprise plan", async () => {
    const owner = await server.account()
    await server.run(Effect.gen(function*() {
      const accounts = yield* Accounts
      yield* accounts.setPlan(owner.accountId, "enterprise")
    }))
    // One more slot comes back every 500 ms, so a burst that takes longer on a busy machine earns
    // a few more: at least 120 pass, no more than the slots returned meanwhile, and the rest are refused.
    const started = Date.now()
    const responses = await burst(130, { "X-API-Key": owner.key })
    const elapsedMs = Date.now() - started
    const passed = responses.filter((r) => r.status === 200).length
    expect(passed).toBeGreaterThanOrEqual(120)
    expect(passed).toBeLessThanOrEqual(120 + Math.ceil(elapsedMs / 500))
    expect(passed).toBeLessThan(130)
    expect(responses.filter((r) => r.status === 429).length).toBe(130 - passed)
  })
})

describe("keyless sample allowance", () => {
  it("accepts three samples a day per client, refuses the fourth until the next UTC day", async () => {
    const clock = controlledClock(Date.UTC(2026, 5, 1, 22, 0, 0))
    const decisions = await server.run(Effect.gen(function*() {
      const quota = yield* SampleQuota
      const today = []
      for (let i = 0; i < 4; i++) today.push(yield* clock.at(quota.consume("203.0.113.7", 3)))
      const otherClient = yield* clock.at(quota.consume("203.0.113.8", 3))
      clock.advance("2 hours")
      const tomorrow = yield* clock.at(quota.consume("203.0.113.7", 3))
      return { today, otherClient, tomorrow }
    }))
    expect(decisions.today.map((d) => d.allowed)).toEqual([true, true, true, false])
    const refused = decisions.today[3]!
    expect(refused.allowed ? 0 : refused.retryAfterSeconds).toBe(2 * 3600)
    expect(decisions.otherClient.allowed).toBe(true)
    expect(decisions.tomorrow.allowed).toBe(true)
  })

  it("issues claim tokens that verify only against their own hash", async () => {
    const result = await server.run(Effect.gen(function*() {
      const quota = yield* SampleQuota
      const a = quota.newClaimToken()
      const b = quota.newClaimToken()
      return [quota.verify(a.token, a.hash), quota.verify(b.token, a.hash), quota.verify("", a.hash)]
    }))
    expect(result).toEqual([true, false, false])
  })
})

describe.skipIf(!onPostgres)("two server processes on one Postgres", () => {
  it("share one account limit", async () => {
    const env = server.storage.env
    await runCliJson(["admin", "account", "create", "--email", "shared@example.com", "--api-access"], env)
    const { key } = await runCliJson<{ key: string }>(["admin", "key", "create", "--email", "shared@example.com"], env)
    const [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)])
    try {
      // As above: a slot returned each second while the bursts run may let one more pass.
      const started = Date.now()
      const responses = [
        ...await burst(35, { "X-API-Key": key }, a.url),
        ...await burst(35, { "X-API-Key": key }, b.url)
      ]
      const passed = responses.filter((r) => r.status === 200).length
      expect(passed).toBeGreaterThanOrEqual(60)
      expect(passed).toBeLessThanOrEqual(60 + Math.ceil((Date.now() - started) / 1000))
      expect(passed).toBeLessThan(70)
      expect(responses.filter((r) => r.status === 429).length).toBe(70 - passed)
    } finally {
      await Promise.all([a.stop(), b.stop()])
    }
  })
})
