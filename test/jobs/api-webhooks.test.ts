/**
 * Completion events and the stall watchdog over real sockets (spec, Events):
 * - `webhook_url` off the enterprise plan is 403 TIER_FORBIDDEN and creates no job;
 * - on enterprise, a local receiver gets `job.done` / `job.failed` as a signed POST
 *   (`webhook-id`, `webhook-timestamp`, `webhook-signature`, verified here with the
 *   account's secret independently of the server's code) whose `data` is the Job;
 * - a receiver answering 500 gets the event again after the 5 s backoff (the task waits in its
 *   row and is claimed again once due), with the same id, and both attempts are recorded; the
 *   9th failed attempt gives the delivery up;
 * - with a receiver slower than the 1 s claim poll, each delivery is sent once and each send
 *   recorded; an attempt stopped mid-send (its task's lease lapsed, the delivery marked in
 *   flight) is sent again by the runner that takes the task over, same id, logged as sent again;
 * - a processing job whose run stopped heartbeating ends PROCESSING_STALLED, retryable,
 *   after the watchdog's sweep (stall limit 1 s here), and the late run cannot overwrite it.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createHmac, randomUUID } from "node:crypto"
import { lookup } from "node:dns/promises"
import * as os from "node:os"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../services/Accounts.ts"
import { JobEvents } from "../../services/jobs/JobEvents.ts"
import { sweep } from "../../services/jobs/JobWatchdog.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
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
/** Answers 1.5 s after each request: slower than the 1 s claim poll. */
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

const deliveryRowsById = (id: string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ attempts: number; last_status: number | null; delivered_at: Date | null; next_attempt_at: Date | null; claim: string | null }>`
      SELECT attempts, last_status, delivered_at, next_attempt_at, claim::text AS claim FROM webhook_deliveries WHERE id = ${id}`.pipe(Effect.orDie)
  }))

/** The delivery's task (kind `webhook`, keyed by the delivery id). */
const webhookTask = (deliveryId: string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ status: string; attempts: number; not_before: Date | null }>`SELECT status, attempts, not_before FROM tasks
      WHERE kind = 'webhook' AND sub_key = ${deliveryId}`.pipe(Effect.orDie)
  }))

/**
 * A delivery with `attempts` sends made and its task: `pending` (due now, with as many engine
 * attempts), or `lapsed` (running under a lease silent for a minute, marked in flight: a process
 * killed mid-send), or `none` (what an older process's event feed writes during a rolling upgrade).
 */
const insertDelivery = (url: string, options: { readonly attempts: number; readonly task: "pending" | "lapsed" | "none" }) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = randomUUID()
    const now = new Date()
    const lapsed = options.task === "lapsed"
    const payload = JSON.stringify({ type: "job.done", timestamp: now.toISOString(), data: { job_id: id } })
    yield* sql`INSERT INTO webhook_deliveries (id, job_id, account_id, event, url, payload, attempts, next_attempt_at, created_at, claim)
      VALUES (${id}, ${randomUUID()}, ${enterprise.accountId}, 'job.done', ${url}, ${payload}::jsonb, ${options.attempts}, ${now}, ${now},
        ${lapsed ? randomUUID() : null})`.pipe(Effect.orDie)
    if (options.task === "none") return { id }
    const silentSince = new Date(now.getTime() - 60_000)
    yield* sql`INSERT INTO tasks (id, kind, job_id, sub_key, payload, status, attempts, run_token, created_at, started_at, attempt_at, heartbeat_at, progress_at)
      VALUES (${randomUUID()}, 'webhook', NULL, ${id}, ${JSON.stringify(id)}::jsonb, ${lapsed ? "running" : "pending"}, ${options.attempts},
        ${lapsed ? randomUUID() : null}, ${now}, ${lapsed ? silentSince : null}, ${lapsed ? silentSince : null},
        ${lapsed ? silentSince : null}, ${lapsed ? silentSince : null})`.pipe(Effect.orDie)
    return { id }
  }))

const logLines = () => server.logs.map((line) => JSON.parse(line) as Record<string, unknown>)

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
      return row?.attempts === 1 && row.last_status === 500 ? row : undefined
    }, "the failed attempt to be recorded")
    expect(pending).toMatchObject({ attempts: 1, last_status: 500, delivered_at: null })
    const dueIn = pending.next_attempt_at!.getTime() - first!.at
    expect(dueIn).toBeGreaterThan(4_000)
    expect(dueIn).toBeLessThanOrEqual(6_000)
    // The wait is the task's, in its row: the engine claims it again once due, on any runner.
    const [task] = await webhookTask(pending.id)
    expect(task).toMatchObject({ status: "pending", attempts: 1 })
    expect(Math.abs(task!.not_before!.getTime() - pending.next_attempt_at!.getTime())).toBeLessThan(1_000)

    const attempts = await eventually(async () => {
      const found = deliveriesFor("/retry")
      return found.length >= 2 ? found : undefined
    }, "the second attempt, after the 5 s backoff", 15_000)
    expect(attempts).toHaveLength(2)
    expect(attempts[1]!.at - first!.at).toBeGreaterThan(4_500)
    expect(attempts[1]!.headers["webhook-id"]).toBe(first!.headers["webhook-id"])
    expect(attempts[1]!.body).toBe(first!.body)
    expectSigned(attempts[1]!, await secretOf(enterprise.accountId))
    const delivered = await eventually(async () => {
      const [row] = await deliveryRows(id)
      return row?.delivered_at !== null ? row : undefined
    }, "the delivery to be recorded")
    expect(delivered).toMatchObject({ attempts: 2, last_status: 200, next_attempt_at: null })
    await eventually(async () => ((await webhookTask(pending.id))[0]?.status === "done" ? true : undefined), "the task to end")
  })

  it("gives a delivery up after its 9th attempt", async () => {
    // Eight attempts already made (the last wait would be 12 h): the next one is the last.
    const { id } = await insertDelivery(receiver.url("/last"), { attempts: 8, task: "pending" })
    receiver.answers.push(503)
    await eventually(async () => (deliveriesFor("/last").length > 0 ? true : undefined), "the 9th attempt", 10_000)
    const [task] = await eventually(async () => {
      const found = await webhookTask(id)
      return found[0]?.status === "failed" ? found : undefined
    }, "the task to be given up")
    expect(task).toMatchObject({ attempts: 9 })
    const [row] = await deliveryRowsById(id)
    expect(row).toMatchObject({ attempts: 9, last_status: 503, delivered_at: null, next_attempt_at: null })
    expect(logLines().some((line) => line["msg"] === "webhook delivery given up" && line["delivery_id"] === id && line["reason"] === "exhausted"))
      .toBe(true)
  })
})

describe("a delivery recorded without a task (an older process during a rolling upgrade)", () => {
  it("gets its task from the housekeeping sweep and is sent once", async () => {
    const { id } = await insertDelivery(receiver.url("/adopted"), { attempts: 0, task: "none" })
    const first = await server.run(sweep)
    expect(first.adoptedDeliveries).toBeGreaterThanOrEqual(1)
    await eventually(async () => (deliveriesFor("/adopted").length > 0 ? true : undefined), "the adopted delivery", 10_000)
    const [row] = await eventually(async () => {
      const found = await deliveryRowsById(id)
      return found[0]?.delivered_at !== null ? found : undefined
    }, "the outcome to be recorded")
    expect(row).toMatchObject({ attempts: 1, last_status: 200, next_attempt_at: null })
    expect((await server.run(sweep)).adoptedDeliveries).toBe(0)
    expect(deliveriesFor("/adopted").map((delivery) => delivery.headers["webhook-id"])).toEqual([id])
  })
})

describe("a receiver slower than the claim poll", () => {
  const sentIds = (path: string) =>
    slow.deliveries.filter((delivery) => delivery.path === path).map((delivery) => delivery.headers["webhook-id"] as string)

  it("sends each delivery once while the receiver holds it, and records every send", async () => {
    const ids = await Promise.all([1, 2, 3].map(() => submit(enterprise.key, slow.url("/overlap"))))
    for (const id of ids) await waitForJob(server, enterprise.key, id)
    const delivered = await eventually(async () => {
      const found = (await Promise.all(ids.map(deliveryRows))).flat()
      return found.length === ids.length && found.every((row) => row.delivered_at !== null) ? found : undefined
    }, "every delivery to be delivered", 20_000)
    // Longer than the receiver's delay plus a poll: a second send would have arrived.
    await sleep(2_500)

    const sent = sentIds("/overlap")
    expect([...sent].sort()).toEqual(delivered.map((row) => row.id).sort())
    for (const row of delivered) expect(row).toMatchObject({ attempts: 1, last_status: 200, next_attempt_at: null })
  })

  it("sends a delivery whose attempt stopped mid-send again once its lease lapsed, with the same id, and says so", async () => {
    // What a process killed mid-send leaves: the delivery marked in flight, its task running
    // under a lease nobody beats any more.
    const { id } = await insertDelivery(slow.url("/stopped"), { attempts: 1, task: "lapsed" })
    await eventually(async () => (sentIds("/stopped").length > 0 ? true : undefined), "the send by a runner that took the task over", 15_000)
    const [row] = await eventually(async () => {
      const found = await deliveryRowsById(id)
      return found[0]?.delivered_at !== null ? found : undefined
    }, "the outcome to be recorded")
    expect(sentIds("/stopped")).toEqual([id])
    expect(row).toMatchObject({ attempts: 2, last_status: 200, next_attempt_at: null, claim: null })
    expect(logLines().some((line) => String(line["msg"]).startsWith("webhook sent again") && line["delivery_id"] === id)).toBe(true)
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
