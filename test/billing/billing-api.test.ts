/**
 * The money side over real sockets with the real pipeline: a job that finishes without
 * credit is locked (json preview, 402 elsewhere, with pay links), a paid checkout unlocks
 * the same job; payment notices credit exactly once; checkout links are reused, expire,
 * and are limited to six an hour; balance and usage figures; every 402 carries its link.
 */
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Billing } from "../../services/billing/Billing.ts"
import { Checkouts } from "../../services/billing/Checkouts.ts"
import { signPaddle } from "../support/paddle.ts"
import { controlledClock } from "../support/clock.ts"
import { mediaDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"

const paddleSecret = "pdl_ntfset_test_secret"
let server: TestServer

beforeAll(async () => {
  server = await startServer("billing", {
    paymentProvider: "paddle",
    paddleWebhookSecret: (await import("effect")).Option.some(Redacted.make(paddleSecret))
  })
})
afterAll(async () => {
  await server?.close()
})

const json = async (response: Response) => await response.json() as Record<string, any>

const submitFile = (key: string, file: string) => {
  const form = new FormData()
  form.append("file", new Blob([fs.readFileSync(path.join(mediaDir, file))]), file)
  return fetch(`${server.url}/v1/transcribe`, { method: "POST", headers: { "X-API-Key": key }, body: form })
}

const waitDone = async (key: string, jobId: string) => {
  const deadline = Date.now() + 90_000
  while (Date.now() < deadline) {
    const job = await json(await server.get(`/v1/jobs/${jobId}`, { "X-API-Key": key }))
    if (job["status"] === "done" || job["status"] === "failed") return job
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`job did not finish: ${JSON.stringify(await json(await server.get(`/v1/jobs/${jobId}`, { "X-API-Key": key })))}`)
}

const checkout = async (key: string, sku: string) =>
  fetch(`${server.url}/v1/checkout`, {
    method: "POST",
    headers: { "X-API-Key": key, "Content-Type": "application/json" },
    body: JSON.stringify({ sku })
  })

const paddleNotice = (checkoutId: string, paddleTxn: string) => {
  const body = JSON.stringify({
    event_id: `evt_${paddleTxn}`,
    event_type: "transaction.completed",
    data: { id: paddleTxn, status: "completed", custom_data: { checkout_id: checkoutId } }
  })
  const ts = Math.floor(Date.now() / 1000)
  return fetch(`${server.url}/webhooks/paddle`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Paddle-Signature": signPaddle(paddleSecret, ts, body) },
    body
  })
}

const balanceOf = (accountId: string) =>
  server.run(Effect.gen(function*() {
    return yield* (yield* Billing).balanceMinutes(accountId as never)
  }))

describe("locked transcript → paid → unlocked", () => {
  it("locks a job the balance cannot cover and unlocks the same job once credit lands", async () => {
    // 0.15 min covers one 7.05 s clip (billed 8 s = 0.1333 min) but not two.
    const owner = await server.account(undefined, { minutes: 0.15 })
    const first = await json(await submitFile(owner.key, "a01_slt_budget.wav"))
    const second = await json(await submitFile(owner.key, "a01_slt_budget.wav"))
    const jobs = [await waitDone(owner.key, first["job_id"]), await waitDone(owner.key, second["job_id"])]
    const locked = jobs.filter((job) => job["locked"] === true)
    const open = jobs.filter((job) => job["locked"] === false)
    expect(locked).toHaveLength(1)
    expect(open).toHaveLength(1)
    const job = locked[0]!
    expect(job).toMatchObject({ status: "done", locked: true, locked_code: "transcript_locked" })
    expect(job["unlock_url"]).toMatch(/^http:\/\/.+\/pricing$/)
    expect(await balanceOf(owner.accountId)).toBeCloseTo(0.15 - 8 / 60, 4)

    const preview = await json(await server.get(`/v1/jobs/${job["job_id"]}/result`, { "X-API-Key": owner.key }))
    expect(preview).toMatchObject({ locked: true, preview: true })
    for (const segment of preview["segments"]) expect(segment.start).toBeLessThan(60)
    const srt = await server.get(`/v1/jobs/${job["job_id"]}/result?format=srt`, { "X-API-Key": owner.key })
    expect(srt.status).toBe(402)
    const refusal = await json(srt)
    expect(refusal).toMatchObject({ code: "transcript_locked" })
    expect(refusal["upgrade_url"]).toMatch(/\/pricing$/)
    expect(refusal["checkout_url"]).toMatch(/\/checkout\/txn_[0-9a-f]+$/)

    const pay = await json(await checkout(owner.key, "mini-4"))
    expect(pay["checkout_url"]).toBe(refusal["checkout_url"])
    expect((await paddleNotice(pay["id"], "txn_paddle_1")).status).toBe(200)
    const after = await json(await server.get(`/v1/checkout/${pay["id"]}`, { "X-API-Key": owner.key }))
    expect(after["status"]).toBe("paid")

    const unlocked = await json(await server.get(`/v1/jobs/${job["job_id"]}`, { "X-API-Key": owner.key }))
    expect(unlocked).toMatchObject({ job_id: job["job_id"], locked: false })
    expect(unlocked).not.toHaveProperty("locked_code")
    const full = await server.get(`/v1/jobs/${job["job_id"]}/result?format=srt`, { "X-API-Key": owner.key })
    expect(full.status).toBe(200)
    expect((await full.text()).toLowerCase()).toContain("hiring plan")
    // 0.15 + 500 − two charges of 8 s (7.05 s rounded up to the second).
    expect(await balanceOf(owner.accountId)).toBeCloseTo(0.15 + 500 - 16 / 60, 3)
  })
})

describe("charging", () => {
  it("never charges failed or no-speech jobs, and never refunds a deletion", async () => {
    const owner = await server.account(undefined, { minutes: 10 })
    const silence = await json(await submitFile(owner.key, "n01_silence.wav"))
    const broken = await json(await submitFile(owner.key, "x02_corrupt.mp3"))
    expect(await waitDone(owner.key, silence["job_id"])).toMatchObject({ status: "done", speech_detected: false })
    expect(await waitDone(owner.key, broken["job_id"])).toMatchObject({ status: "failed", error_code: "NO_AUDIO" })
    expect(await balanceOf(owner.accountId)).toBe(10)
    const speech = await json(await submitFile(owner.key, "a02_kal_weather.wav"))
    await waitDone(owner.key, speech["job_id"])
    const charged = await balanceOf(owner.accountId)
    expect(charged).toBeCloseTo(10 - 8 / 60, 4)
    const removed = await fetch(`${server.url}/v1/jobs/${speech["job_id"]}`, { method: "DELETE", headers: { "X-API-Key": owner.key } })
    expect(removed.status).toBe(204)
    expect(await balanceOf(owner.accountId)).toBe(charged)
  })

  it("charges each job once and never overdraws under concurrent completions", async () => {
    const owner = await server.account(undefined, { minutes: 1 })
    // Ten finished jobs of 20 s each settle at once: 1 minute covers three of them.
    const outcome = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const billing = yield* Billing
      const ids = Array.from({ length: 10 }, () => crypto.randomUUID())
      for (const id of ids) {
        yield* sql`INSERT INTO jobs (id, account_id, status, source, input_kind, created_at, speech_detected, audio_duration_seconds)
          VALUES (${id}, ${owner.accountId}, 'done', 'upload', 'upload', now(), true, 20)`
      }
      const settlements = yield* Effect.all(
        [...ids, ...ids].map((id) =>
          sql.withTransaction(billing.settle({ id: id as never, account_id: owner.accountId, speech_detected: true, audio_duration_seconds: 20 }))
        ),
        { concurrency: "unbounded" }
      )
      const [charges] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ledger
        WHERE account_id = ${owner.accountId} AND kind = 'job_charge'`
      return { settlements, charges: charges!.n, balance: yield* billing.balanceMinutes(owner.accountId) }
    }).pipe(Effect.orDie))
    expect(outcome.charges).toBe(3)
    expect(outcome.balance).toBeGreaterThanOrEqual(0)
    expect(outcome.balance).toBeCloseTo(1 - 3 * (20 / 60), 3)
  })
})

describe("refusals for lack of credit carry pay links", () => {
  it("answers 402 NO_CREDITS on an empty balance with a checkout_url for the smallest pack", async () => {
    const owner = await server.account(undefined, { minutes: 0 })
    const response = await submitFile(owner.key, "a01_slt_budget.wav")
    expect(response.status).toBe(402)
    const body = await json(response)
    expect(body).toMatchObject({ code: "NO_CREDITS", balance_minutes: 0 })
    expect(body["checkout_url"]).toMatch(/\/checkout\/txn_/)
    const page = await fetch(body["checkout_url"])
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain("500 minutes")
    expect(html).toContain("4.00")
    const byUrl = await fetch(`${server.url}/v1/transcribe/url`, {
      method: "POST",
      headers: { "X-API-Key": owner.key, "Content-Type": "application/json" },
      body: JSON.stringify({ url: "https://example.com/episode.mp3" })
    })
    expect(byUrl.status).toBe(402)
    expect(await json(byUrl)).toMatchObject({ code: "NO_CREDITS" })
    const init = await fetch(`${server.url}/v1/uploads/init`, {
      method: "POST",
      headers: { "X-API-Key": owner.key, "Content-Type": "application/json" },
      body: JSON.stringify({ filename: "talk.mp3", size_bytes: 1000 })
    })
    expect(init.status).toBe(402)
    expect((await json(init))["checkout_url"]).toBe(body["checkout_url"])
  })

  it("answers 402 INSUFFICIENT_CREDITS_FOR_DURATION when the known duration exceeds the balance", async () => {
    const owner = await server.account(undefined, { minutes: 0.05 })
    const response = await submitFile(owner.key, "a05_dialogue_slt_kal.wav")
    expect(response.status).toBe(402)
    const body = await json(response)
    expect(body).toMatchObject({ code: "INSUFFICIENT_CREDITS_FOR_DURATION", balance_minutes: 0.05 })
    expect(body["required_minutes"]).toBeCloseTo(19 / 60, 4)
    expect(body["checkout_url"]).toMatch(/\/checkout\/txn_/)
    const list = await json(await server.get("/v1/jobs", { "X-API-Key": owner.key }))
    expect(list["total"]).toBe(0)
  })
})

describe("checkout links", () => {
  it("returns the same open link for the same sku and a new one for another", async () => {
    const owner = await server.account()
    const a = await json(await checkout(owner.key, "pro-monthly"))
    expect(a).toMatchObject({ status: "pending", sku: "pro-monthly", amount_usd: 15, minutes: 2000 })
    expect(a["id"]).toMatch(/^txn_/)
    expect(a["expires_at"] - Date.now() / 1000).toBeGreaterThan(47.9 * 3600)
    const again = await json(await checkout(owner.key, "pro-monthly"))
    expect(again["id"]).toBe(a["id"])
    const other = await json(await checkout(owner.key, "team-monthly"))
    expect(other["id"]).not.toBe(a["id"])
  })

  it("refuses an unknown sku with 400 UNKNOWN_SKU listing what is sellable", async () => {
    const owner = await server.account()
    const response = await checkout(owner.key, "gold-forever")
    expect(response.status).toBe(400)
    const body = await json(response)
    expect(body["code"]).toBe("UNKNOWN_SKU")
    expect(body["sellable"]).toEqual(["mini-4", "pro-monthly", "team-monthly", "workspace-monthly"])
  })

  it("allows six new links an hour, then 429 with Retry-After", async () => {
    const owner = await server.account()
    const outcome = await server.run(Effect.gen(function*() {
      const checkouts = yield* Checkouts
      const clock = controlledClock(Date.now())
      const opened = []
      for (let i = 0; i < 6; i++) {
        const link = yield* clock.at(checkouts.open(owner.accountId, "mini-4", "builtin"))
        opened.push(link.id)
        // Expire it so the next request for the sku opens a new link.
        yield* (yield* SqlClient.SqlClient)`UPDATE checkouts SET status = 'expired' WHERE id = ${link.id}`.pipe(Effect.orDie)
        clock.advance("5 minutes")
      }
      const refused = yield* Effect.flip(clock.at(checkouts.open(owner.accountId, "mini-4", "builtin")))
      clock.advance("31 minutes")
      const later = yield* clock.at(checkouts.open(owner.accountId, "mini-4", "builtin"))
      return { opened, refused, later }
    }))
    expect(new Set(outcome.opened).size).toBe(6)
    expect(outcome.refused.retryAfterSeconds).toBeGreaterThan(0)
    expect(outcome.refused.retryAfterSeconds).toBeLessThanOrEqual(31 * 60)
    expect(outcome.later.id).toMatch(/^txn_/)
  })

  it("answers 429 RATE_LIMITED over HTTP when the hourly allowance is used", async () => {
    const owner = await server.account()
    for (const sku of ["mini-4", "pro-monthly", "team-monthly", "workspace-monthly"]) await checkout(owner.key, sku)
    await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE checkouts SET status = 'expired' WHERE account_id = ${owner.accountId}`
    }).pipe(Effect.orDie))
    await checkout(owner.key, "mini-4")
    await checkout(owner.key, "pro-monthly")
    const response = await checkout(owner.key, "team-monthly")
    expect(response.status).toBe(429)
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(await json(response)).toMatchObject({ code: "RATE_LIMITED" })
  })

  it("expires an unpaid link after 48 hours and refuses to pay it", async () => {
    const owner = await server.account()
    const outcome = await server.run(Effect.gen(function*() {
      const checkouts = yield* Checkouts
      const clock = controlledClock(Date.now())
      const link = yield* clock.at(checkouts.open(owner.accountId, "mini-4", "builtin"))
      clock.advance("47 hours")
      const before = yield* clock.at(checkouts.get(link.id))
      clock.advance("2 hours")
      const after = yield* clock.at(checkouts.get(link.id))
      const paying = yield* Effect.flip(clock.at(checkouts.pay(link.id, null)))
      return { before, after, paying }
    }))
    expect(outcome.before._tag === "Some" && outcome.before.value.status).toBe("pending")
    expect(outcome.after._tag === "Some" && outcome.after.value.status).toBe("expired")
    expect(outcome.paying._tag).toBe("CheckoutExpired")
  })

  it("hides another account's checkout", async () => {
    const owner = await server.account()
    const stranger = await server.account()
    const link = await json(await checkout(owner.key, "mini-4"))
    const response = await server.get(`/v1/checkout/${link["id"]}`, { "X-API-Key": stranger.key })
    expect(response.status).toBe(404)
  })
})

describe("payment notices", () => {
  it("credits once when Paddle delivers the same notice twice, to the account that asked", async () => {
    const owner = await server.account(undefined, { minutes: 0 })
    const link = await json(await checkout(owner.key, "team-monthly"))
    expect((await paddleNotice(link["id"], "txn_dup")).status).toBe(200)
    expect((await paddleNotice(link["id"], "txn_dup")).status).toBe(200)
    expect(await balanceOf(owner.accountId)).toBe(5000)
  })

  it("refuses a notice whose signature does not verify", async () => {
    const owner = await server.account(undefined, { minutes: 0 })
    const link = await json(await checkout(owner.key, "mini-4"))
    const body = JSON.stringify({ event_type: "transaction.completed", data: { id: "x", custom_data: { checkout_id: link["id"] } } })
    const forged = await fetch(`${server.url}/webhooks/paddle`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Paddle-Signature": signPaddle("wrong-secret", Math.floor(Date.now() / 1000), body) },
      body
    })
    expect(forged.status).toBe(422)
    const stale = await fetch(`${server.url}/webhooks/paddle`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Paddle-Signature": signPaddle(paddleSecret, Math.floor(Date.now() / 1000) - 3600, body) },
      body
    })
    expect(stale.status).toBe(422)
    expect(await balanceOf(owner.accountId)).toBe(0)
  })

  it("credits once when the operator confirms twice (built-in provider)", async () => {
    const owner = await server.account(undefined, { minutes: 0 })
    const link = await json(await checkout(owner.key, "mini-4"))
    const results = await server.run(Effect.gen(function*() {
      const checkouts = yield* Checkouts
      return yield* Effect.all([checkouts.pay(link["id"], "op"), checkouts.pay(link["id"], "op")], { concurrency: 2 })
    }))
    expect(results.map((r) => r.alreadyPaid).sort()).toEqual([false, true])
    expect(await balanceOf(owner.accountId)).toBe(500)
  })
})

describe("balance and usage", () => {
  it("reports every balance field, the workspace object, and usage figures", async () => {
    const owner = await server.account(undefined, { minutes: 90 })
    const job = await json(await submitFile(owner.key, "a04_ked_podcast.wav"))
    await waitDone(owner.key, job["job_id"])
    const credits = await json(await server.get("/v1/credits", { "X-API-Key": owner.key }))
    expect(credits).toMatchObject({
      email: owner.email,
      pro_active: false,
      pro_hours_remaining_in_period: 0,
      pro_plan: null,
      pro_expires_at: null,
      workspace: { active: false, plan: null, unlimited_minutes: false, concurrent_jobs: 5, period_ends_at: null }
    })
    expect(credits["payg_hours_remaining"]).toBeCloseTo((90 - 9 / 60) / 60, 4)
    expect(credits["hours_used_lifetime"]).toBeCloseTo(8.89 / 3600, 4)
    const usage = await json(await server.get("/v1/usage", { "X-API-Key": owner.key }))
    expect(usage["minutes_today"]).toBeCloseTo(8.89 / 60, 2)
    expect(usage["minutes_month_to_date"]).toBeCloseTo(8.89 / 60, 2)
    expect(usage["daily_allowance_minutes"]).toBeCloseTo(90 - 9 / 60, 2)
    expect(usage["queue_depth"]).toBe(0)
    expect(usage["average_job_seconds"]).toBeGreaterThan(0)
    // The job's charge, then the credit that paid for it: newest first, minutes signed.
    const [charge, grant, ...rest] = usage["recent_charges"]
    expect(rest).toEqual([])
    expect(charge).toMatchObject({ kind: "job_charge", minutes: -0.15, ref: job["job_id"] })
    expect(grant).toMatchObject({ kind: "grant", minutes: 90 })
    expect(charge.created_at).toBeGreaterThanOrEqual(grant.created_at)
  })

  it("reports an active Workspace period bought through checkout", async () => {
    const owner = await server.account(undefined, { minutes: 0 })
    const link = await json(await checkout(owner.key, "workspace-monthly"))
    await paddleNotice(link["id"], "txn_ws")
    const credits = await json(await server.get("/v1/credits", { "X-API-Key": owner.key }))
    expect(credits).toMatchObject({
      pro_active: true,
      pro_plan: "workspace-monthly",
      workspace: { active: true, plan: "workspace-monthly", unlimited_minutes: true, concurrent_jobs: 10 }
    })
    expect(Date.parse(credits["pro_expires_at"]) - Date.now()).toBeGreaterThan(29 * 86400_000)
    // Unlimited: a submit with no pack minutes is accepted.
    expect((await submitFile(owner.key, "a02_kal_weather.wav")).status).toBe(202)
    const me = await json(await server.get("/v1/me", { "X-API-Key": owner.key }))
    expect(me).toMatchObject({ tier: "paid", plan: { id: "workspace", concurrent_jobs: 10 } })
  })

  it("answers 503 CREDITS_UNAVAILABLE, never a wrong number, when the balance cannot be read", async () => {
    const owner = await server.account()
    const setLedger = (from: string, to: string) =>
      server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`ALTER TABLE ${from} RENAME TO ${to}`)
      }).pipe(Effect.orDie))
    await setLedger("ledger", "ledger_unavailable")
    try {
      const response = await server.get("/v1/credits", { "X-API-Key": owner.key })
      expect(response.status).toBe(503)
      expect(await json(response)).toMatchObject({ code: "CREDITS_UNAVAILABLE" })
    } finally {
      await setLedger("ledger_unavailable", "ledger")
    }
    expect((await server.get("/v1/credits", { "X-API-Key": owner.key })).status).toBe(200)
  })
})

describe("the purchase flag of /v1/me", () => {
  it("is read from the partial index over purchases, not from every ledger entry", async () => {
    const owner = await server.account()
    const plan = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql.withTransaction(Effect.gen(function*() {
        // The tables are small here: take the planner's cost choice away from a sequential scan.
        yield* sql.unsafe("SET LOCAL enable_seqscan = off")
        const rows = yield* sql<{ "QUERY PLAN": string }>`EXPLAIN SELECT EXISTS (
          SELECT 1 FROM ledger WHERE account_id = ${owner.accountId} AND kind = 'purchase') AS paid`
        return rows.map((row) => row["QUERY PLAN"]).join("\n")
      }))
    }).pipe(Effect.orDie))
    expect(plan).toContain("ledger_account_purchases")
    const me = await server.get("/v1/me", { "X-API-Key": owner.key })
    expect(me.status).toBe(200)
  })
})
