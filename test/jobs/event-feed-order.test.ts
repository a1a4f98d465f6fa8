/**
 * The job event feed delivers an event whose transaction committed after a later-numbered
 * one (issue 25 item 5). On Postgres two connections interleave for real: transaction A
 * appends (taking the lower `seq`) and stays open, transaction B appends (higher `seq`) and
 * commits, the feed passes, then A commits: the consumer must get both, each once. A reader
 * of `seq > position` passed B's seq before A committed and never saw A. PGlite has a single
 * connection (transactions cannot interleave), so there the file checks that a rolled-back
 * append and a plain one still flow through the (txid, seq) cursor.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DatabaseConfig } from "../../services/config/DatabaseConfig.ts"
import { type JobEventConsumer, JobEventFeed } from "../../services/work/JobEventFeed.ts"
import { JobEventLog } from "../../services/work/JobEventLog.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import { onPostgres, serverUrl } from "../support/database.ts"
import { eventually } from "../support/jobsClient.ts"
import { type Engine, startEngine } from "../work/support/engine.ts"

const delivered: Array<string> = []

const recorder: JobEventConsumer = {
  name: "order-test",
  types: ["finished"],
  handle: (event) => Effect.sync(() => delivered.push(event.job_id)).pipe(Effect.as([]))
}

let engine: Engine

beforeAll(async () => {
  engine = await startEngine("event-order", { handlers: [], consumers: [recorder] })
}, 120_000)
afterAll(async () => {
  await engine?.close()
})

const pass = () => engine.run(JobEventFeed.use((feed) => feed.pass))
const appendNow = (id: string) =>
  engine.run(JobEventLog.use((log) => log.append("finished", [{ id: JobId.make(id), account_id: null }])))
const seqOf = (id: string) =>
  engine.run(SqlClient.SqlClient.use((sql) => sql<{ seq: string }>`SELECT seq::text AS seq FROM job_events WHERE job_id = ${id}`))
    .then((rows) => Number(rows[0]?.seq))
const times = (id: string) => delivered.filter((seen) => seen === id).length
/** Passes until `done` holds (an event waits while an older transaction of the database is open). */
const passUntil = (done: () => boolean, what: string, timeoutMs: number) =>
  eventually(async () => {
    await pass()
    return done() ? true : undefined
  }, what, timeoutMs)

/**
 * Runs `work` in a transaction on `runtime` and keeps the transaction open until `release`:
 * `ready` resolves once `work` has run, `ended` once the transaction has committed.
 */
const holdTransaction = <R, ER>(
  runtime: ManagedRuntime.ManagedRuntime<R | SqlClient.SqlClient, ER>,
  work: Effect.Effect<unknown, unknown, R | SqlClient.SqlClient>
) => {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let ready!: () => void
  const workDone = new Promise<void>((resolve) => (ready = resolve))
  const ended = runtime.runPromise(
    SqlClient.SqlClient.use((sql) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* work
        yield* Effect.sync(ready)
        yield* Effect.promise(() => released)
      }))
    )
  )
  return { ready: workDone, release, ended }
}

describe("job event feed order", () => {
  it("an append that rolls back leaves nothing behind and the next one is delivered", async () => {
    const [gone, kept] = [randomUUID(), randomUUID()]
    await engine.run(
      SqlClient.SqlClient.use((sql) =>
        sql.withTransaction(
          Effect.andThen(
            JobEventLog.use((log) => log.append("finished", [{ id: JobId.make(gone), account_id: null }])),
            Effect.fail("roll back")
          )
        )
      ).pipe(Effect.ignore)
    )
    await appendNow(kept)
    // Passes until it comes: a short transaction of the engine's own (a claim poll) that began
    // before the append holds the horizon back for a moment, and the event waits (loses nothing).
    await passUntil(() => times(kept) > 0, "the kept event", 20_000)
    await pass()
    expect(times(gone)).toBe(0)
    expect(times(kept)).toBe(1)
  })

  it.skipIf(!onPostgres)("a transaction left open in another database does not hold the feed back", async () => {
    // Another application's database on the same server: its open transaction (with an xid)
    // is older than the event's, so a server-wide horizon would wait for it.
    const elsewhere = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(serverUrl!), maxConnections: 1 }))
    // As text: the client reads an unknown type's binary value as UTF-8.
    const open = holdTransaction(elsewhere, SqlClient.SqlClient.use((sql) => sql`SELECT pg_current_xact_id()::text`))
    try {
      await open.ready
      const id = randomUUID()
      await appendNow(id)
      await passUntil(() => times(id) > 0, "the event while another database's transaction is open", 5_000)
      expect(times(id)).toBe(1)
    } finally {
      open.release()
      await open.ended
      await elsewhere.dispose()
    }
  }, 60_000)

  it.skipIf(!onPostgres)("delivers an event committed after a later-numbered one, and both once", async () => {
    const databaseUrl = await engine.run(DatabaseConfig.use((config) => Effect.succeed(config.databaseUrl)))
    // A second pool of its own: transaction A holds one of its connections open.
    const other = ManagedRuntime.make(
      JobEventLog.layer.pipe(Layer.provideMerge(PgClient.layer({ url: Option.getOrThrow(databaseUrl), maxConnections: 2 })))
    )
    try {
      const [early, late] = [JobId.make(randomUUID()), JobId.make(randomUUID())]
      const transactionA = holdTransaction(other, JobEventLog.use((log) => log.append("finished", [{ id: early, account_id: null }])))
      await transactionA.ready
      await appendNow(late)
      // Passes while A is open: `late` is committed, `early` not yet.
      await pass()
      expect(times(early)).toBe(0)
      transactionA.release()
      await transactionA.ended
      expect(await seqOf(early)).toBeLessThan(await seqOf(late))
      await passUntil(() => times(early) > 0 && times(late) > 0, "both events", 20_000)
      // And nothing twice, however many passes follow.
      expect(await pass()).toBe(0)
      expect(times(early)).toBe(1)
      expect(times(late)).toBe(1)
    } finally {
      await other.dispose()
    }
  }, 60_000)
})
