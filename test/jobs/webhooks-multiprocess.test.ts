/**
 * Webhook delivery with two `verbatim serve` processes on one Postgres (runs only when
 * VERBATIM_TEST_DATABASE_URL is set): both run the delivery loop over the same
 * `webhook_deliveries`, and the receiver answers slower than the loop's 1 s interval. Every
 * event must reach the receiver exactly once (one request per `webhook-id`), and the table
 * must record what was sent: one attempt each, delivered, no claim left behind.
 *
 * The deliveries are written straight into the table, as the outbox consumer writes them when
 * a job ends (that each end is recorded once is covered in api-webhooks.test.ts). What the two
 * processes race over is the sending; jobs would also bring in the model, since a job's
 * transcription may be routed to either process's runner.
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

const deliveries = 30
/** Slower than the 1 s delivery loop. */
const receiverDelayMs = 1_500

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

describe.skipIf(!onPostgres)("webhook deliveries with two processes on one Postgres", () => {
  it("sends each event once to a receiver slower than the loop, and records every send", async () => {
    const env = { ...storage.env, VERBATIM_FETCH_ALLOW: `127.0.0.1:${receiver.port}` }
    const account = await runCliJson<{ id: string }>(["admin", "account", "create", "--email", "hooks@example.com"], env)
    processes.push(...await Promise.all([startServerProcess(env), startServerProcess(env)]))

    // Due at once, written in one statement: both loops find them on their next pass.
    const ids = Array.from({ length: deliveries }, () => randomUUID())
    await query(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const now = new Date()
      const [first, ...rest] = ids.map((id) => ({
        id,
        job_id: randomUUID(),
        account_id: account.id,
        event: "job.done",
        url: receiver.url("/multi"),
        payload: JSON.stringify({ type: "job.done", timestamp: now.toISOString(), data: { job_id: id } }),
        next_attempt_at: now,
        created_at: now
      }))
      yield* sql`INSERT INTO webhook_deliveries ${sql.insert([first!, ...rest])}`.pipe(Effect.orDie)
    }))

    await eventually(async () => {
      const found = await rows()
      return found.every((row) => row.delivered_at !== null) ? true : undefined
    }, "every delivery to be delivered", 120_000, 250)
    // A second send of anything would have arrived by now (receiver delay plus loop intervals).
    await sleep(receiverDelayMs + 2_500)

    const sent = receiver.deliveries.map((delivery) => delivery.headers["webhook-id"] as string)
    const perId = new Map<string, number>()
    for (const id of sent) perId.set(id, (perId.get(id) ?? 0) + 1)
    const twice = [...perId].filter(([, count]) => count > 1)
    expect(twice, `${twice.length} of ${deliveries} sent more than once`).toEqual([])
    expect([...sent].sort()).toEqual([...ids].sort())

    const recorded = await rows()
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
})
