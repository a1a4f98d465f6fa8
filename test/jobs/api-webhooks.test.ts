/**
 * Completion events and the stall watchdog over real sockets (spec, Events):
 * - `webhook_url` off the enterprise plan is 403 TIER_FORBIDDEN and creates no job;
 * - on enterprise, a local receiver gets `job.done` / `job.failed` as a signed POST
 *   (`webhook-id`, `webhook-timestamp`, `webhook-signature`, verified here with the
 *   account's secret independently of the server's code) whose `data` is the Job;
 * - a receiver answering 500 gets the event again after the backoff (the delivery pass is
 *   run with a clock moved past it instead of waiting), and the delivery is recorded;
 * - with a receiver slower than the 1 s delivery loop, passes that overlap (the loop's and
 *   more started beside it) send each delivery once and record each send; a pass stopped
 *   mid-send (as a crash would) keeps the delivery claimed until its lease runs out, and
 *   then it is sent again, with both attempts recorded;
 * - a processing job whose run stopped heartbeating ends PROCESSING_STALLED, retryable,
 *   after the watchdog's sweep (stall limit 1 s here), and the late run cannot overwrite it.
 */
import { Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { createHmac, randomUUID } from "node:crypto"
import { lookup } from "node:dns/promises"
import * as os from "node:os"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../services/Accounts.ts"
import { JobEvents } from "../../services/jobs/JobEvents.ts"
import { sweep } from "../../services/jobs/JobWatchdog.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import { controlledClock } from "../support/clock.ts"
import {
  accepted,
  eventually,
  expectError,
  expectJobShape,
  getJob,
  type Job,
  listJobs,
  postJson,
  sleep,
  submitFile,
  submitUrl,
  waitForJob
} from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, type StandInDirective, tinyWav } from "../support/standInPipeline.ts"
import { type Delivery, startWebhookReceiver, type WebhookReceiver } from "../support/webhookReceiver.ts"

let server: TestServer
let receiver: WebhookReceiver
/** Reachable only through a host name: its port is allowed, its address (loopback) is not. */
let hidden: WebhookReceiver
/** Answers 1.5 s after each request: slower than the 1 s delivery loop. */
let slow: WebhookReceiver
let enterprise: { key: string; accountId: AccountId }
const standIn = makeStandIn({ delayMs: 100, steps: 1 })

beforeAll(async () => {
  receiver = await startWebhookReceiver()
  hidden = await startWebhookReceiver()
  slow = await startWebhookReceiver({ delayMs: 1_500 })
  server = await startServer(
    "api-webhooks",
    {
      rateLimitPerMinute: 10_000,
      // The second entry opens `hidden`'s port for one unrelated address only.
      fetchAllow: [`127.0.0.1:${receiver.port}`, `198.51.100.7:${hidden.port}`, `127.0.0.1:${slow.port}`],
      jobStallSeconds: 1
    },
    { pipeline: standIn.layer }
  )
  enterprise = await server.account()
  await server.run(Effect.gen(function*() {
    yield* (yield* Accounts).setPlan(enterprise.accountId, "enterprise")
  }))
})
afterAll(async () => {
  await server?.close()
  await receiver?.close()
  await hidden?.close()
  await slow?.close()
})

const submit = async (key: string, webhookUrl: string | undefined, directive?: StandInDirective) =>
  (await accepted(await submitFile(server, {
    key,
    file: { name: "hooked.wav", bytes: tinyWav(directive) },
    fields: webhookUrl === undefined ? {} : { webhook_url: webhookUrl }
  }))).job_id

const secretOf = (accountId: AccountId) =>
  server.run(Effect.gen(function*() {
    return yield* (yield* JobEvents).webhookSecret(accountId)
  }))

/** Standard Webhooks: base64 HMAC-SHA256 over "id.timestamp.body", keyed by the secret's base64 bytes. */
const expectSigned = (delivery: Delivery, secret: string) => {
  const id = delivery.headers["webhook-id"] as string
  const timestamp = delivery.headers["webhook-timestamp"] as string
  const signature = delivery.headers["webhook-signature"] as string
  expect(id).toMatch(/^\S{8,}$/)
  expect(timestamp).toMatch(/^\d+$/)
  expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(120)
  expect(secret).toMatch(/^whsec_/)
  const key = Buffer.from(secret.slice("whsec_".length), "base64")
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${delivery.body}`).digest("base64")
  expect(signature.split(" ")).toContain(`v1,${expected}`)
  // A different body would not verify.
  const forged = createHmac("sha256", key).update(`${id}.${timestamp}.${delivery.body} `).digest("base64")
  expect(signature).not.toContain(forged)
}

const deliveriesFor = (path: string) => receiver.deliveries.filter((delivery) => delivery.path === path)

const deliveryRows = (jobId: string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{
      id: string
      event: string
      attempts: number
      last_status: number | null
      delivered_at: Date | null
      next_attempt_at: Date | null
    }>`SELECT id, event, attempts, last_status, delivered_at, next_attempt_at FROM webhook_deliveries
      WHERE job_id = ${jobId}`.pipe(Effect.orDie)
  }))

describe("webhook_url address rules at submit", () => {
  it("refuses loopback and localhost callbacks with 422 and creates no job", async () => {
    for (const url of ["http://127.0.0.1:9/hook", "http://localhost/hook", "ftp://example.com/hook"]) {
      const body = await expectError(
        await submitFile(server, { key: enterprise.key, file: { name: "a.wav", bytes: tinyWav() }, fields: { webhook_url: url } }),
        422,
        "VALIDATION_FAILED"
      )
      expect(body["detail"]).toEqual([expect.objectContaining({ loc: ["body", "webhook_url"] })])
    }
  })
})

describe("webhook_url off the enterprise plan", () => {
  it("answers 403 TIER_FORBIDDEN on every submit path and creates no job", async () => {
    const standard = await server.account()
    const body = await expectError(
      await submitFile(server, {
        key: standard.key,
        file: { name: "a.wav", bytes: tinyWav() },
        fields: { webhook_url: receiver.url() }
      }),
      403,
      "TIER_FORBIDDEN"
    )
    expect(body["error"]).toMatch(/enterprise/)
    await expectError(
      await submitUrl(server, standard.key, { url: "https://example.com/episode.mp3", webhook_url: receiver.url() }),
      403,
      "TIER_FORBIDDEN"
    )
    await expectError(
      await postJson(server, "/v1/uploads/init", { filename: "a.wav", size_bytes: 10, webhook_url: receiver.url() }, standard.key),
      403,
      "TIER_FORBIDDEN"
    )
    const workspace = await server.account()
    await server.run(Effect.gen(function*() {
      yield* (yield* Accounts).setPlan(workspace.accountId, "workspace")
    }))
    await expectError(
      await submitFile(server, { key: workspace.key, file: { name: "a.wav", bytes: tinyWav() }, fields: { webhook_url: receiver.url() } }),
      403,
      "TIER_FORBIDDEN"
    )
    expect((await listJobs(server, standard.key)).total).toBe(0)
    expect((await listJobs(server, workspace.key)).total).toBe(0)
  })
})

describe("webhooks on the enterprise plan", () => {
  it("POSTs a signed job.done whose data is the Job", async () => {
    const id = await submit(enterprise.key, receiver.url("/done"))
    const done = await waitForJob(server, enterprise.key, id)
    const [delivery] = await eventually(async () => {
      const found = deliveriesFor("/done")
      return found.length > 0 ? found : undefined
    }, "the job.done delivery", 10_000)
    expect(delivery!.headers["content-type"]).toMatch(/application\/json/)
    expectSigned(delivery!, await secretOf(enterprise.accountId))
    const payload = JSON.parse(delivery!.body) as { type: string; timestamp: string; data: Job }
    expect(payload.type).toBe("job.done")
    expect(Number.isNaN(Date.parse(payload.timestamp))).toBe(false)
    expectJobShape(payload.data)
    expect(payload.data).toEqual(done)

    const [row] = await deliveryRows(id)
    expect(row).toMatchObject({ id: delivery!.headers["webhook-id"], event: "job.done", attempts: 1, last_status: 200 })
    expect(row!.delivered_at).not.toBeNull()
    await sleep(1_500)
    expect(deliveriesFor("/done")).toHaveLength(1)
  })

  it("POSTs job.failed for a failed job", async () => {
    const id = await submit(enterprise.key, receiver.url("/failed"), { fail: "noaudio", delayMs: 20 })
    const failed = await waitForJob(server, enterprise.key, id)
    const [delivery] = await eventually(async () => {
      const found = deliveriesFor("/failed")
      return found.length > 0 ? found : undefined
    }, "the job.failed delivery", 10_000)
    const payload = JSON.parse(delivery!.body) as { type: string; data: Job }
    expect(payload.type).toBe("job.failed")
    expect(payload.data).toMatchObject({ job_id: id, status: "failed", error_code: "NO_AUDIO", retryable: false })
    expect(payload.data).toEqual(failed)
    // The task ended (nothing to retry), and its log line says the job failed and why.
    const ended = server.logs.map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line["msg"] === "task ended" && line["job_id"] === id)
    expect(ended).toMatchObject({ kind: "transcribe", outcome: "done", result: "job failed", error_code: "NO_AUDIO" })
  })

  it("delivers again after a 500 once the backoff has passed, and records the delivery", async () => {
    receiver.answers.push(500)
    const id = await submit(enterprise.key, receiver.url("/retry"))
    await waitForJob(server, enterprise.key, id)
    const [first] = await eventually(async () => {
      const found = deliveriesFor("/retry")
      return found.length > 0 ? found : undefined
    }, "the first delivery attempt", 10_000)
    const pending = await eventually(async () => {
      const [row] = await deliveryRows(id)
      return row?.attempts === 1 ? row : undefined
    }, "the failed attempt to be recorded")
    expect(pending).toMatchObject({ attempts: 1, last_status: 500, delivered_at: null })
    const dueIn = pending.next_attempt_at!.getTime() - Date.now()
    expect(dueIn).toBeGreaterThan(0)
    expect(dueIn).toBeLessThanOrEqual(5_000)

    // Not due yet at the real time: nothing is sent.
    expect(await server.run(JobEvents.use((events) => events.deliverDue))).toBe(0)
    const clock = controlledClock(Date.now())
    clock.advance("6 seconds")
    expect(await server.run(clock.at(JobEvents.use((events) => events.deliverDue)))).toBe(1)

    const attempts = deliveriesFor("/retry")
    expect(attempts).toHaveLength(2)
    expect(attempts[1]!.headers["webhook-id"]).toBe(first!.headers["webhook-id"])
    expect(attempts[1]!.body).toBe(first!.body)
    expectSigned(attempts[1]!, await secretOf(enterprise.accountId))
    const [delivered] = await deliveryRows(id)
    expect(delivered).toMatchObject({ attempts: 2, last_status: 200, next_attempt_at: null })
    expect(delivered!.delivered_at).not.toBeNull()
  })
})

describe("a receiver slower than the delivery loop", () => {
  const pass = <A>(effect: Effect.Effect<A, never, JobEvents>) => server.run(effect)
  const deliverDue = JobEvents.use((events) => events.deliverDue)
  const sentIds = (path: string) =>
    slow.deliveries.filter((delivery) => delivery.path === path).map((delivery) => delivery.headers["webhook-id"] as string)

  it("sends each delivery once while passes overlap, and records every send", async () => {
    const ids = await Promise.all([1, 2, 3].map(() => submit(enterprise.key, slow.url("/overlap"))))
    for (const id of ids) await waitForJob(server, enterprise.key, id)
    const rows = await eventually(async () => {
      const found = (await Promise.all(ids.map(deliveryRows))).flat()
      return found.length === ids.length ? found : undefined
    }, "the three deliveries to be recorded")
    // The loop is sending (or about to send) these; two more passes start beside it while the
    // slow receiver holds its request. Neither may send what another pass has in flight.
    await Promise.all([pass(deliverDue), pass(deliverDue)])
    const delivered = await eventually(async () => {
      const found = (await Promise.all(ids.map(deliveryRows))).flat()
      return found.every((row) => row.delivered_at !== null) ? found : undefined
    }, "every delivery to be delivered", 20_000)
    // Longer than the receiver's delay plus a loop interval: a second send would have arrived.
    await sleep(2_500)

    const sent = sentIds("/overlap")
    expect([...sent].sort()).toEqual(rows.map((row) => row.id).sort())
    for (const row of delivered) expect(row).toMatchObject({ attempts: 1, last_status: 200, next_attempt_at: null })
  })

  it("keeps a delivery claimed by a pass stopped mid-send until the lease runs out, then sends it again", async () => {
    // Due in ten minutes, so the background loop (on the real clock) leaves it alone; the passes
    // below run on a clock moved past that.
    const id = randomUUID()
    const jobId = randomUUID()
    const clock = controlledClock(Date.now())
    await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const payload = JSON.stringify({ type: "job.done", timestamp: new Date().toISOString(), data: { job_id: jobId } })
      yield* sql`INSERT INTO webhook_deliveries (id, job_id, account_id, event, url, payload, next_attempt_at, created_at)
        VALUES (${id}, ${jobId}, ${enterprise.accountId}, 'job.done', ${slow.url("/stopped")}, ${payload}::jsonb,
          ${new Date(clock.now + 600_000)}, ${new Date(clock.now)})`.pipe(Effect.orDie)
    }))
    clock.advance("11 minutes")

    // A pass is stopped while the receiver holds its request: how a crash mid-send looks.
    await pass(clock.at(Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(deliverDue)
      yield* Effect.promise(() => eventually(async () => (sentIds("/stopped").length > 0 ? true : undefined), "the send"))
      yield* Fiber.interrupt(fiber)
    })))
    expect(sentIds("/stopped")).toEqual([id])
    const [claimed] = await deliveryRows(jobId)
    expect(claimed).toMatchObject({ attempts: 1, delivered_at: null })

    // Still claimed a little later: not sent again.
    clock.advance("5 seconds")
    expect(await pass(clock.at(deliverDue))).toBe(0)
    expect(sentIds("/stopped")).toEqual([id])

    // Past the lease the claim has lapsed, and the delivery is not lost.
    clock.advance("2 minutes")
    expect(await pass(clock.at(deliverDue))).toBe(1)
    expect(sentIds("/stopped")).toEqual([id, id])
    const [row] = await deliveryRows(jobId)
    expect(row).toMatchObject({ attempts: 2, last_status: 200, next_attempt_at: null })
    expect(row!.delivered_at).not.toBeNull()
  })
})

describe("webhook address policy", () => {
  it("does not call back into loopback through a host name that resolves there", async (context) => {
    // The machine's own name resolves to loopback on most hosts (/etc/hosts); link fetching refuses it.
    const name = os.hostname()
    const addresses = await lookup(name, { all: true }).catch(() => [])
    if (!addresses.some((entry) => entry.address.startsWith("127."))) {
      context.skip(`${name} does not resolve to a loopback address here`)
      return
    }
    const hook = `http://${name}:${hidden.port}/ssrf`
    // The same URL as a link is refused up front.
    const asLink = await submitUrl(server, enterprise.key, { url: `http://${name}:${hidden.port}/a.wav` })
    expect(asLink.status).toBe(400)
    expect(["BAD_URL", "UNSUPPORTED_HOST"]).toContain(((await asLink.json()) as { code: string }).code)

    const id = await submit(enterprise.key, hook)
    await waitForJob(server, enterprise.key, id)
    await eventually(async () => {
      const [row] = await deliveryRows(id)
      return row !== undefined && row.attempts >= 1 ? row : undefined
    }, "a delivery attempt", 10_000)
    expect(hidden.deliveries).toEqual([])
    const [row] = await deliveryRows(id)
    expect(row!.delivered_at).toBeNull()
  })
})

describe("stall watchdog", () => {
  it("ends a processing job that stopped heartbeating as PROCESSING_STALLED, retryable, and keeps it so", async () => {
    // The hang outlasts the 1 s stall limit plus the wait below with a wide margin for a busy machine.
    const id = await submit(enterprise.key, receiver.url("/stalled"), { hangMs: 6_000, delayMs: 100, steps: 2 })
    await waitForJob(server, enterprise.key, id, (job) => job.status === "processing", { intervalMs: 30 })
    await sleep(2_000)
    await server.run(sweep)
    const failed = await getJob(server, enterprise.key, id)
    expectJobShape(failed)
    expect(failed).toMatchObject({ status: "failed", error_code: "PROCESSING_STALLED", retryable: true })
    expect(failed.error).toMatch(/progress/)

    // The run wakes up later; its heartbeat finds the job ended and it records nothing.
    await eventually(async () => ((standIn.runs.get(id) ?? []).length >= 2 ? true : undefined), "the stalled run to stop", 10_000)
    expect(standIn.runs.get(id)).toEqual(["started", "interrupted"])
    expect(await getJob(server, enterprise.key, id)).toEqual(failed)

    const [delivery] = await eventually(async () => {
      const found = deliveriesFor("/stalled")
      return found.length > 0 ? found : undefined
    }, "the job.failed delivery for the stall", 10_000)
    expect(JSON.parse(delivery!.body)).toMatchObject({ type: "job.failed", data: { job_id: id, error_code: "PROCESSING_STALLED" } })
  })
})
