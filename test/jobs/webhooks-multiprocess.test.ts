/**
 * Webhook delivery and housekeeping with two `verbatim serve` processes on one Postgres (runs
 * only when VERBATIM_TEST_DATABASE_URL is set).
 *
 * Each delivery is a task of the `webhook` kind; both processes' runners claim from the same
 * task table while the receiver answers slower than their 1 s claim poll. Every event must
 * reach the receiver exactly once (one request per `webhook-id`), and the table must record
 * what was sent: one attempt each, delivered, nothing left marked in flight.
 *
 * The deliveries and their tasks are written straight into the tables, as the outbox consumer
 * writes them when a job ends (that each end is recorded once is covered in api-webhooks.test.ts).
 * What the two processes race over is the sending; jobs would also bring in the model.
 *
 * Then one process is killed with SIGKILL while both have deliveries in flight. Delivery is at
 * least once with a stable `webhook-id` (services/jobs/JobEvents.ts): every event still
 * arrives; the only ones that arrive twice are those the killed process had in flight at the
 * kill, sent again by the survivor once their task's lease expired (same id), each logged as
 * sent again; everything else arrives once, and the table ends with every delivery recorded.
 *
 * Housekeeping (the watchdog sweep) and the job event feed are cluster singletons: at any time
 * they run on one of the two processes (counted from the lines each process logs when they start
 * and stop there), and on the survivor after the kill.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestStorage, onPostgres, type TestStorage } from "../support/database.ts"
import { eventually, sleep } from "../support/jobsClient.ts"
import { runCliJson, type ServerProcess, startServerProcess } from "../support/process.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhookReceiver.ts"
import { housekeepingStarted, housekeepingStopped } from "../../services/jobs/JobWatchdog.ts"

const deliveries = 30
/** Slower than the 1 s claim poll. */
const receiverDelayMs = 1_500
/** The task engine's lease expiry: how long an in-flight delivery of a killed process waits (less a beat). */
const leaseExpiryMs = 10_000

let storage: TestStorage
let receiver: WebhookReceiver
const processes: Array<ServerProcess> = []

beforeAll(async () => {
  if (!onPostgres) return
  storage = await makeTestStorage("webhooks-multiprocess")
  receiver = await startWebhookReceiver({ delayMs: receiverDelayMs })
}, 60_000)
afterAll(async () => {
  await Promise.all(processes.map((server) => server.stop("SIGKILL")))
  await receiver?.close()
  await storage?.dispose()
})

const query = <A>(effect: Effect.Effect<A, never, SqlClient.SqlClient>) =>
  effect.pipe(
    Effect.provide(PgClient.layer({ url: Option.getOrThrow(storage.databaseUrl), maxConnections: 1 })),
    Effect.orDie,
    Effect.runPromise
  )

interface DeliveryRow {
  readonly id: string
  readonly attempts: number
  readonly last_status: number | null
  readonly delivered_at: Date | null
  readonly next_attempt_at: Date | null
}

const rows = () =>
  query(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<DeliveryRow>`SELECT id, attempts, last_status, delivered_at, next_attempt_at
      FROM webhook_deliveries ORDER BY id`.pipe(Effect.orDie)
  }))

let accountId: string

/**
 * `count` deliveries to `path`, each with its `webhook` task due at once, written in one
 * transaction: both processes' runners find them on their next claim.
 */
const insertDue = async (count: number, path: string) => {
  const ids: Array<string> = Array.from({ length: count }, () => randomUUID())
  await query(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = new Date()
    const [first, ...rest] = ids.map((id) => ({
      id,
      job_id: randomUUID(),
      account_id: accountId,
      event: "job.done",
      url: receiver.url(path),
      payload: JSON.stringify({ type: "job.done", timestamp: now.toISOString(), data: { job_id: id } }),
      next_attempt_at: now,
      created_at: now
    }))
    const [firstTask, ...restTasks] = ids.map((id) => ({
      id: randomUUID(),
      kind: "webhook",
      job_id: null,
      sub_key: id,
      payload: JSON.stringify(id),
      status: "pending",
      created_at: now
    }))
    yield* sql.withTransaction(Effect.all([
      sql`INSERT INTO webhook_deliveries ${sql.insert([first!, ...rest])}`,
      sql`INSERT INTO tasks ${sql.insert([firstTask!, ...restTasks])}`
    ])).pipe(Effect.orDie)
  }))
  return ids
}

/** Whether `line` runs on `server` now: it logged the start more often than the stop. */
const runsOn = (server: ServerProcess, started: string, stopped: string) => {
  const count = (msg: string) => server.output().split("\n").filter((line) => line.includes(`"msg":"${msg}"`)).length
  return count(started) > count(stopped)
}
const singletons = [
  { name: "housekeeping", started: housekeepingStarted, stopped: housekeepingStopped },
  { name: "job event feed", started: "job event feed runs on this process", stopped: "job event feed stopped on this process" }
]

describe.skipIf(!onPostgres)("webhook deliveries with two processes on one Postgres", () => {
  it("sends each event once to a receiver slower than the poll, and records every send", async () => {
    const env = { ...storage.env, VERBATIM_FETCH_ALLOW: `127.0.0.1:${receiver.port}` }
    const account = await runCliJson<{ id: string }>(["admin", "account", "create", "--email", "hooks@example.com"], env)
    processes.push(...await Promise.all([startServerProcess(env), startServerProcess(env)]))

    accountId = account.id
    const ids = await insertDue(deliveries, "/multi")

    await eventually(async () => {
      const found = await rows()
      return found.every((row) => row.delivered_at !== null) ? true : undefined
    }, "every delivery to be delivered", 120_000, 250)
    // A second send of anything would have arrived by now (receiver delay plus poll intervals).
    await sleep(receiverDelayMs + 2_500)

    const sent = receiver.deliveries.filter((delivery) => delivery.path === "/multi").map((delivery) => delivery.headers["webhook-id"] as string)
    const perId = new Map<string, number>()
    for (const id of sent) perId.set(id, (perId.get(id) ?? 0) + 1)
    const twice = [...perId].filter(([, count]) => count > 1)
    expect(twice, `${twice.length} of ${deliveries} sent more than once`).toEqual([])
    expect([...sent].sort()).toEqual([...ids].sort())

    const recorded = (await rows()).filter((row) => ids.includes(row.id))
    for (const row of recorded) {
      expect(row).toMatchObject({ attempts: 1, last_status: 200, next_attempt_at: null })
      expect(row.delivered_at).not.toBeNull()
    }
    expect(recorded.reduce((sum, row) => sum + row.attempts, 0)).toBe(sent.length)
    const claimed = await query(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ id: string }>`SELECT id FROM webhook_deliveries WHERE claim IS NOT NULL`.pipe(Effect.orDie)
    }))
    expect(claimed).toEqual([])
  }, 240_000)

  it("runs housekeeping and the event feed on one process at a time", async () => {
    const [a, b] = processes
    for (const singleton of singletons) {
      // Shards may still move between the two just after start: wait until one holds it, then
      // watch for a while that never both do.
      await eventually(async () => (runsOn(a!, singleton.started, singleton.stopped) !== runsOn(b!, singleton.started, singleton.stopped) ? true : undefined), `${singleton.name} on one process`, 30_000, 100)
    }
    for (let check = 0; check < 20; check++) {
      for (const singleton of singletons) {
        const on = [a!, b!].filter((server) => runsOn(server, singleton.started, singleton.stopped))
        expect(on.length, `${singleton.name} runs on ${on.length} processes`).toBeLessThanOrEqual(1)
      }
      await sleep(150)
    }
  }, 60_000)

  it("with one process killed mid-delivery: every event arrives, only those it had in flight twice", async () => {
    const [victim, survivor] = processes
    expect(victim && survivor, "the two processes of the first test").toBeTruthy()
    // More than one process's slots (20), so both processes hold deliveries in flight at once.
    const count = 40
    const ids = await insertDue(count, "/killed")
    const arrivals = () => receiver.deliveries.filter((delivery) => delivery.path === "/killed")
    await eventually(async () => (arrivals().length > 20 ? true : undefined), "both processes to be sending", 30_000, 20)
    await victim!.stop("SIGKILL")
    const killedAt = Date.now()

    await eventually(async () => {
      const found = (await rows()).filter((row) => ids.includes(row.id))
      return found.length === count && found.every((row) => row.delivered_at !== null) ? true : undefined
    }, "every delivery to be delivered after the kill", leaseExpiryMs + 60_000, 500)
    await sleep(receiverDelayMs + 2_500)

    const byId = new Map<string, Array<number>>()
    for (const delivery of arrivals()) {
      const id = delivery.headers["webhook-id"] as string
      byId.set(id, [...(byId.get(id) ?? []), delivery.at])
    }
    // Every event arrived.
    expect([...byId.keys()].sort()).toEqual([...ids].sort())
    // Those twice were in flight at the kill (arrived, answer still pending: the receiver answers
    // after `receiverDelayMs`), and went again only once their task's lease expired (its last beat
    // was up to 2 s before the kill); nothing went three times.
    const twice = [...byId].filter(([, times]) => times.length > 1)
    expect(twice.length, "the killed process's in-flight deliveries are sent again").toBeGreaterThan(0)
    for (const [id, times] of twice) {
      expect(times, id).toHaveLength(2)
      expect(times[0]!, `${id} was in flight at the kill`).toBeGreaterThan(killedAt - receiverDelayMs - 500)
      expect(times[0]!).toBeLessThanOrEqual(killedAt)
      expect(times[1]! - times[0]!, `${id} went again only after its lease expired`).toBeGreaterThan(leaseExpiryMs - 3_000)
    }
    // The table counts every send and ends with nothing marked in flight.
    const recorded = (await rows()).filter((row) => ids.includes(row.id))
    for (const row of recorded) {
      expect(row).toMatchObject({ last_status: 200, next_attempt_at: null })
      expect(row.attempts).toBeGreaterThanOrEqual(byId.get(row.id)!.length)
      expect(row.attempts).toBeLessThanOrEqual(2)
    }
    // The survivor says what happened to each one it sent again.
    for (const [id] of twice) expect(survivor!.output()).toMatch(new RegExp(`webhook sent again[^\\n]*${id}`))
    // Housekeeping and the feed run on the survivor now, whichever process had them.
    for (const singleton of singletons) {
      await eventually(async () => (runsOn(survivor!, singleton.started, singleton.stopped) ? true : undefined), `${singleton.name} on the survivor`, 60_000, 250)
    }
  }, 240_000)
})
