/**
 * The task wake-up is volatile (services/work/TaskEntity.ts), on real storage (PGlite with one
 * runner, or Postgres with a socket runner when VERBATIM_TEST_DATABASE_URL is set). The runner
 * here polls only once an hour, so a task that runs promptly was started by its wake-up or by
 * the claim a runner makes at start:
 * - an enqueued task's `Run` message reaches the runner and the task runs at once;
 * - a task stored without a message (as a crash between the commit and the send leaves it) is
 *   claimed when a runner starts, with no start-up pass sending messages;
 * - effect/cluster keeps no message or reply row for any of it (the tables are read here only
 *   to show they stay empty).
 */
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type TaskHandler, taskKind, type TaskRun } from "../../services/work/TaskKind.ts"
import { Tasks } from "../../services/work/Tasks.ts"
import { TaskStore } from "../../services/work/TaskStore.ts"
import { eventually, sleep } from "../support/jobsClient.ts"
import { type Engine, startEngine } from "./support/engine.ts"

const Ping = taskKind({
  kind: "test-ping",
  owner: "none",
  payload: Schema.String,
  concurrency: 2,
  timeout: "1 minute",
  stallAfter: "1 minute"
})

const pinged = new Map<string, number>()
const pingHandler: TaskHandler<string, "none"> = {
  ...Ping,
  run: (task: TaskRun<string, "none">) => Effect.sync(() => void pinged.set(task.payload, Date.now())),
  giveUp: () => Effect.void
}

let engine: Engine

beforeAll(async () => {
  engine = await startEngine("work-wake-ups", { handlers: [pingHandler], engine: { pollEvery: "1 hour" } })
}, 120_000)
afterAll(async () => {
  await engine?.close()
})

const clusterRows = () =>
  engine.run(SqlClient.SqlClient.use((sql) =>
    sql<{ messages: number; replies: number }>`SELECT
      (SELECT count(*)::int FROM cluster_messages) AS messages,
      (SELECT count(*)::int FROM cluster_replies) AS replies`
  )).then((rows) => rows[0]!)

describe("volatile task wake-ups", () => {
  it("an enqueued task runs at once through its wake-up, with the poll an hour away", async () => {
    const names = Array.from({ length: 5 }, () => randomUUID())
    const sentAt = Date.now()
    for (const name of names) await engine.run(Tasks.use((tasks) => tasks.submit(Ping, { jobId: null, payload: name, key: name })))
    await eventually(async () => (names.every((name) => pinged.has(name)) ? true : undefined), "the woken tasks to run", 10_000, 50)
    for (const name of names) expect(pinged.get(name)! - sentAt).toBeLessThan(5_000)
  })

  it("a task stored without its message is claimed when a runner starts", async () => {
    const name = randomUUID()
    // The previous test's wake-ups may still be on their way (a send is retried for up to 2 s
    // before it is dropped, Tasks.ts); one arriving now would make the runner claim. Let them pass.
    await sleep(3_000)
    // Stored the way a crash after the commit and before the send leaves it: no wake-up.
    await engine.run(TaskStore.use((store) => store.enqueue(Ping.kind, null, { subKey: name, payload: name })))
    await sleep(1_500)
    expect(pinged.has(name), "nothing woke the runner, and its poll is an hour away").toBe(false)
    await engine.restart()
    await eventually(async () => (pinged.has(name) ? true : undefined), "the start-up claim to run it", 10_000, 50)
  })

  it("keeps no cluster message or reply rows for the wake-ups", async () => {
    const names = Array.from({ length: 10 }, () => randomUUID())
    for (const name of names) await engine.run(Tasks.use((tasks) => tasks.submit(Ping, { jobId: null, payload: name, key: name })))
    await eventually(async () => (names.every((name) => pinged.has(name)) ? true : undefined), "the tasks to run", 10_000, 50)
    expect(await clusterRows()).toEqual({ messages: 0, replies: 0 })
  })
})
