/**
 * The task engine in-process on real storage (test/work/support/engine.ts): per-kind
 * concurrency, failed attempts retried with exponential backoff up to the cap, the kinds'
 * stall and time limits, and idempotent enqueueing per (kind, job, sub-key). The engine
 * beats the leases itself; a stall is a process whose beats stop (an engine built with
 * beats an hour apart stands for one stuck in native code).
 */
import { type Duration, Effect, Exit, Layer, Option, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DatabaseLayer } from "../../layers/Database.ts"
import { configLayerWith } from "../support/config.ts"
import { TaskHandlers } from "../../services/work/TaskHandlers.ts"
import { TaskRunner } from "../../services/work/TaskRunner.ts"
import { Tasks } from "../../services/work/Tasks.ts"
import { type GiveUpReason, type TaskHandler, TaskFailed, type TaskKind } from "../../services/work/TaskKind.ts"
import { TaskStore } from "../../services/work/TaskStore.ts"
import { TaskSupervisor } from "../../services/work/TaskSupervisor.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import { makeTestStorage } from "../support/database.ts"
import { eventually, sleep } from "../support/jobsClient.ts"
import { type Engine, startEngine } from "./support/engine.ts"

/** What each kind's handler saw, by kind. */
const running = new Map<string, number>()
const maxRunning = new Map<string, number>()
const attemptsAt = new Map<string, Array<number>>()
const gaveUp = new Map<string, Array<GiveUpReason>>()
/** Per job: what its run should do. */
const plans = new Map<string, { readonly failTimes?: number; readonly sleepMs?: number }>()

const handler = (
  kind: TaskKind,
  concurrency: number,
  limits: { timeout?: Duration.Input; stallAfter?: Duration.Input } = {}
): TaskHandler<null, "job"> => ({
  kind,
  concurrency,
  timeout: limits.timeout ?? "1 hour",
  stallAfter: limits.stallAfter ?? "1 hour",
  run: (task) =>
    Effect.gen(function*() {
      const plan = plans.get(task.jobId) ?? {}
      attemptsAt.set(task.taskId, [...(attemptsAt.get(task.taskId) ?? []), Date.now()])
      const now = (running.get(kind) ?? 0) + 1
      running.set(kind, now)
      maxRunning.set(kind, Math.max(maxRunning.get(kind) ?? 0, now))
      yield* Effect.ensuring(
        Effect.gen(function*() {
          const slices = Math.max(1, Math.ceil((plan.sleepMs ?? 300) / 100))
          for (let i = 0; i < slices; i++) {
            yield* Effect.sleep(Math.min(100, plan.sleepMs ?? 300))
          }
          if (task.attempt <= (plan.failTimes ?? 0)) return yield* new TaskFailed({ reason: `planned failure ${task.attempt}` })
        }),
        Effect.sync(() => running.set(kind, (running.get(kind) ?? 1) - 1))
      )
    }),
  giveUp: (task, reason) => Effect.sync(() => gaveUp.set(task.taskId, [...(gaveUp.get(task.taskId) ?? []), reason]))
})

let engine: Engine
const backoffMs = 300

beforeAll(async () => {
  engine = await startEngine("work-engine", {
    engine: { backoff: `${backoffMs} millis` },
    handlers: [
      handler("index", 2),
      handler("insights", 1),
      handler("render-clip", 1, { stallAfter: "400 millis" }),
      handler("diarize", 1, { timeout: "600 millis" })
    ]
  })
}, 120_000)
afterAll(async () => {
  await engine?.close()
})

const newJob = () => JobId.make(randomUUID())
const enqueue = (kind: TaskKind, jobId: JobId, subKey?: string) =>
  engine.run(Tasks.use((tasks) => tasks.enqueue(kind, jobId, { subKey })))
const task = (id: string) => engine.run(TaskStore.use((store) => store.get(id))).then(Option.getOrThrow)
const ended = (ids: ReadonlyArray<string>, timeoutMs = 30_000) =>
  eventually(async () => {
    const tasks = await Promise.all(ids.map(task))
    return tasks.every((t) => t.status === "done" || t.status === "failed") ? tasks : undefined
  }, `${ids.length} tasks to end`, timeoutMs)

describe("task engine", () => {
  it("runs each kind within its own concurrency, kinds side by side", async () => {
    const ids = await Promise.all([
      ...Array.from({ length: 6 }, () => enqueue("index", newJob())),
      ...Array.from({ length: 4 }, () => enqueue("insights", newJob()))
    ])
    const tasks = await ended(ids)
    expect(tasks.map((t) => t.status)).toEqual(ids.map(() => "done"))
    expect(maxRunning.get("index")).toBe(2)
    expect(maxRunning.get("insights")).toBe(1)
    expect(tasks.every((t) => t.attempts === 1)).toBe(true)
  })

  it("enqueueing is idempotent per (kind, job, sub-key); a sub-key or another kind is another task", async () => {
    const job = newJob()
    const [a, b] = await Promise.all([enqueue("index", job), enqueue("index", job)])
    expect(a).toBe(b)
    const c = await enqueue("index", job, "clip-1")
    const d = await enqueue("insights", job)
    expect(new Set([a, c, d]).size).toBe(3)
    await ended([a!, c, d])
    // Enqueued again after it ended, without `rerun`: the same task, not run again.
    expect(await enqueue("index", job)).toBe(a)
    await sleep(500)
    expect(attemptsAt.get(a!)).toHaveLength(1)
  })

  it("a rerun asked for while the task runs starts it over once that attempt ends; after it ended, at once", async () => {
    const job = newJob()
    plans.set(job, { sleepMs: 800 })
    const id = await enqueue("insights", job)
    await eventually(async () => ((await task(id)).status === "running" ? true : undefined), "the attempt to start")
    const rerun = () => engine.run(Tasks.use((tasks) => tasks.enqueue("insights", job, { rerun: "latest" })))
    expect(await rerun()).toBe(id)
    expect(await rerun()).toBe(id)
    await eventually(async () => ((attemptsAt.get(id) ?? []).length === 2 ? true : undefined), "the second run")
    const [done] = await ended([id])
    expect(done).toMatchObject({ status: "done", attempts: 1, rerun: false })
    await sleep(500)
    expect(attemptsAt.get(id)).toHaveLength(2)
    await rerun()
    await eventually(async () => ((attemptsAt.get(id) ?? []).length === 3 ? true : undefined), "the run after it ended")
  })

  it("retries a failing task after 1x then 2x the backoff and ends it done", async () => {
    const job = newJob()
    plans.set(job, { failTimes: 2, sleepMs: 50 })
    const id = await enqueue("index", job)
    const [done] = await ended([id])
    expect(done).toMatchObject({ status: "done", attempts: 3 })
    const [first, second, third] = attemptsAt.get(id)!
    expect(second! - first!).toBeGreaterThanOrEqual(backoffMs - 20)
    expect(third! - second!).toBeGreaterThanOrEqual(2 * backoffMs - 20)
  })

  it("gives a task up after the attempt cap (3): giveUp once, the task failed, no fourth attempt", async () => {
    const job = newJob()
    plans.set(job, { failTimes: 99, sleepMs: 20 })
    const id = await enqueue("insights", job)
    const [failed] = await ended([id])
    expect(failed).toMatchObject({ status: "failed", attempts: 3, last_error: "attempt cap reached" })
    expect(gaveUp.get(id)).toEqual(["exhausted"])
    // Sending its message again changes nothing.
    await engine.run(Tasks.use((tasks) => tasks.send(id)))
    await sleep(800)
    expect(attemptsAt.get(id)).toHaveLength(3)
    expect(gaveUp.get(id)).toEqual(["exhausted"])
  })

  it("gives up a running task whose lease goes silent as stalled; the late attempt cannot end it done", async () => {
    const silent = await startEngine("work-engine-silent", {
      engine: { backoff: `${backoffMs} millis`, heartbeatEvery: "1 hour" },
      handlers: [handler("render-clip", 1, { stallAfter: "400 millis" })]
    })
    try {
      const job = newJob()
      plans.set(job, { sleepMs: 2_000 })
      const id = await silent.run(Tasks.use((tasks) => tasks.enqueue("render-clip", job)))
      const row = () => silent.run(TaskStore.use((store) => store.get(id))).then(Option.getOrThrow)
      await eventually(async () => ((await row()).status === "running" ? true : undefined), "the attempt to start")
      await sleep(700)
      expect(await silent.run(TaskSupervisor.use((supervisor) => supervisor.sweep))).toBe(1)
      expect(gaveUp.get(id)).toEqual(["stalled"])
      await sleep(2_000)
      expect(await row()).toMatchObject({ status: "failed", last_error: "no heartbeat within the stall limit" })
    } finally {
      await silent.close()
    }
  })

  it("gives up a task that runs past its kind's time limit as timeout", async () => {
    const job = newJob()
    plans.set(job, { sleepMs: 5_000 })
    const id = await enqueue("diarize", job)
    const [failed] = await ended([id], 10_000)
    expect(failed).toMatchObject({ status: "failed", attempts: 1, last_error: "ran past the time limit" })
    expect(gaveUp.get(id)).toEqual(["timeout"])
  })

  it("a task of a kind nobody registered waits pending", async () => {
    const id = await enqueue("transcribe", newJob())
    await sleep(1_000)
    expect(await task(id)).toMatchObject({ status: "pending", attempts: 0 })
    const rows = await engine.run(SqlClient.SqlClient.use((sql) => sql`SELECT 1 FROM tasks WHERE id = ${id}`))
    expect(rows).toHaveLength(1)
  })
})

describe("stall detection after an outage", () => {
  it("does not give up a task whose heartbeat went quiet while no runner lived; it does once the silence happens on its watch", async () => {
    // The supervisor alone on real storage (no runner delivers anything, so the row stays as
    // written): a task left `running` with a heartbeat from an hour ago, as after a long
    // outage. The supervisor that starts now must not call that a stall; a silence of
    // `stallAfter` while it lives is one.
    const storage = await makeTestStorage("work-engine-outage")
    const layer = TaskSupervisor.layer.pipe(
      // The runner claims nothing here: it looks once at start (nothing yet) and then not for an hour.
      Layer.provideMerge(TaskRunner.layer({ backoff: `${backoffMs} millis`, pollEvery: "1 hour", leaseExpiry: "1 day" })),
      Layer.provideMerge(Layer.succeed(TaskHandlers, TaskHandlers.make([handler("render-clip", 1, { stallAfter: "1500 millis" })]))),
      Layer.provideMerge(TaskStore.layer),
      Layer.provideMerge(DatabaseLayer),
      Layer.provideMerge(configLayerWith({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl }))
    )
    const scope = Effect.runSync(Scope.make())
    try {
      const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
      const run = <A>(effect: Effect.Effect<A, unknown, Layer.Success<typeof layer>>) =>
        Effect.runPromise(Effect.provideContext(effect, context) as Effect.Effect<A>)
      const id = await run(TaskStore.use((store) => store.enqueue("render-clip", newJob())))
      await run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE tasks SET status = 'running', attempts = 1, run_token = ${randomUUID()},
          started_at = now(), attempt_at = now(), heartbeat_at = now() - interval '1 hour' WHERE id = ${id}`
      }))
      expect(await run(TaskSupervisor.use((supervisor) => supervisor.sweep))).toBe(0)
      await sleep(1_700)
      expect(await run(TaskSupervisor.use((supervisor) => supervisor.sweep))).toBe(1)
      expect(await run(TaskStore.use((store) => store.get(id)))).toMatchObject({
        value: { status: "failed", last_error: "no heartbeat within the stall limit" }
      })
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await storage.dispose()
    }
  })
})
