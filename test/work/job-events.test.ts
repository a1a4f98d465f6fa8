/**
 * The job event outbox and its feed, in-process on real storage: a `finished` subscriber
 * gets each event once, in order, only of the types it asked for; its reaction (a row it
 * writes, a task it asks for) happens exactly once even when the consumer fails once and
 * when the process stops before the feed ran (events committed before a restart are
 * delivered after it).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type JobEventConsumer, JobEventFeed } from "../../services/work/JobEventFeed.ts"
import { JobEventLog, type JobEventType } from "../../services/work/JobEventLog.ts"
import type { TaskHandler } from "../../services/work/TaskKind.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import { eventually } from "../support/jobsClient.ts"
import { type Engine, startEngine } from "./support/engine.ts"

/** Jobs whose next delivery the consumer fails (once each). */
const failOnce = new Set<string>()
const indexed: Array<string> = []
const blockers = new Set<string>()

const finishedSubscriber: JobEventConsumer = {
  name: "test-finished",
  types: ["finished"],
  handle: (event) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO test_seen (job_id, seq) VALUES (${event.job_id}, ${event.seq})`.pipe(Effect.orDie)
      if (failOnce.delete(event.job_id)) return yield* Effect.die(new Error("consumer fails once"))
      return [{ kind: "index" as const, jobId: event.job_id }]
    }).pipe(Effect.provideService(SqlClient.SqlClient, sqlRef.current!))
}

/** The consumer writes through the engine's SqlClient (set once the engine is up). */
const sqlRef: { current: SqlClient.SqlClient | undefined } = { current: undefined }

const indexHandler: TaskHandler<null, "job"> = {
  kind: "index",
  concurrency: 2,
  timeout: "1 hour",
  stallAfter: "1 hour",
  run: (task) =>
    Effect.gen(function*() {
      if (blockers.has(task.jobId)) yield* Effect.never
      indexed.push(task.jobId)
    }),
  giveUp: () => Effect.void
}

let engine: Engine

beforeAll(async () => {
  engine = await startEngine("work-events", { handlers: [indexHandler], consumers: [finishedSubscriber] })
  sqlRef.current = await engine.run(SqlClient.SqlClient.use((sql) => Effect.succeed(sql)))
  await engine.run(SqlClient.SqlClient.use((sql) => sql`CREATE TABLE test_seen (job_id uuid NOT NULL, seq bigint NOT NULL)`))
}, 120_000)
afterAll(async () => {
  await engine?.close()
})

const append = (type: JobEventType, ...ids: ReadonlyArray<string>) =>
  engine.run(JobEventLog.use((log) => log.append(type, ids.map((id) => ({ id: JobId.make(id), account_id: null })))))
const pass = () => engine.run(JobEventFeed.use((feed) => feed.pass))
/**
 * Passes until `count` deliveries were made in all. On Postgres an event waits while an older
 * transaction of this database is open, and the engine's own claim poll or shard refresh can
 * be one for a moment; a pass then delivers nothing yet, which is correct.
 */
const passUntil = async (count: number) => {
  let total = 0
  await eventually(async () => {
    total += await pass()
    return total >= count ? true : undefined
  }, `${count} deliveries`, 10_000)
  return total
}
const seen = (id: string) =>
  engine.run(SqlClient.SqlClient.use((sql) => sql<{ seq: string }>`SELECT seq::text AS seq FROM test_seen WHERE job_id = ${id}`))

describe("job event feed", () => {
  it("delivers each finished event once, in order, and skips other types", async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()]
    await append("finished", a, b)
    await append("changed", a)
    await append("deleted", c)
    await append("finished", c)
    expect(await passUntil(3)).toBe(3)
    expect(await pass()).toBe(0)
    for (const id of [a, b, c]) expect(await seen(id)).toHaveLength(1)
    const order = await engine.run(SqlClient.SqlClient.use((sql) => sql<{ job_id: string }>`SELECT job_id::text AS job_id FROM test_seen
      WHERE job_id IN ${sql.in([a, b, c])} ORDER BY seq`))
    expect(order.map((row) => row.job_id)).toEqual([a, b, c])
    // The consumer asked for an index task per event: each ran once.
    await eventually(async () => ([a, b, c].every((id) => indexed.includes(id)) ? true : undefined), "the index tasks")
    expect(indexed.filter((id) => id === a || id === b || id === c)).toHaveLength(3)
  })

  it("a consumer that fails gets the same event again; its writes happen once", async () => {
    const [a, b] = [randomUUID(), randomUUID()]
    failOnce.add(b)
    await append("finished", a, b)
    // The batch fails at b: nothing of it is kept (a's row rolls back too), the cursor stays.
    await eventually(async () => {
      expect(await pass()).toBe(0)
      return failOnce.has(b) ? undefined : true
    }, "the failing delivery", 10_000)
    expect(await seen(a)).toHaveLength(0)
    expect(await passUntil(2)).toBe(2)
    expect(await seen(a)).toHaveLength(1)
    expect(await seen(b)).toHaveLength(1)
  })

  it("events committed before a stop are delivered once after the restart", async () => {
    const id = randomUUID()
    await append("finished", id)
    await engine.restart()
    sqlRef.current = await engine.run(SqlClient.SqlClient.use((sql) => Effect.succeed(sql)))
    expect(await passUntil(1)).toBe(1)
    expect(await pass()).toBe(0)
    expect(await seen(id)).toHaveLength(1)
    await eventually(async () => (indexed.includes(id) ? true : undefined), "the index task after the restart")
  })
})
