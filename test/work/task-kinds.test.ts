/**
 * Tasks as data (issue 25 item 1): a kind declared in this file only — name, payload Schema,
 * owner, concurrency, attempts, backoff, limits — runs through the real engine on real
 * storage (PGlite, or Postgres with socket runners when VERBATIM_TEST_DATABASE_URL is set):
 * its typed payload is stored and decoded, a task without a job is unique per key, a failed
 * attempt waits its backoff in the row (`not_before`, kept over a restart) and not in a sleep,
 * the engine beats the lease and interrupts an attempt that lost it, and a row that does not
 * fit its kind is given up at once.
 */
import { Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TaskHandlers } from "../../services/work/TaskHandlers.ts"
import { type GiveUpReason, type GivenUpTask, type TaskHandler, TaskFailed, taskKind, type TaskRun } from "../../services/work/TaskKind.ts"
import { Tasks } from "../../services/work/Tasks.ts"
import { TaskStore } from "../../services/work/TaskStore.ts"
import { TaskSupervisor } from "../../services/work/TaskSupervisor.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import { eventually, sleep } from "../support/jobsClient.ts"
import { type Engine, startEngine } from "./support/engine.ts"

/** A kind without a job: greets `name`, failing its first `failTimes` attempts, taking `ms`. */
const Greet = taskKind({
  kind: "test-greet",
  owner: "none",
  payload: Schema.Struct({ name: Schema.String, failTimes: Schema.Int, ms: Schema.Int }),
  concurrency: 2,
  maxAttempts: 3,
  backoff: "1500 millis",
  timeout: "1 minute",
  stallAfter: "3 seconds"
})
type GreetPayload = typeof Greet.payload.Type

/** A kind owned by a job, with a payload. */
const Stamp = taskKind({
  kind: "test-stamp",
  payload: Schema.Struct({ label: Schema.String }),
  concurrency: 1,
  timeout: "1 minute",
  stallAfter: "3 seconds"
})

/** A kind that watches progress: runs `ms`, reporting progress every `everyMs` (0: never). */
const Watched = taskKind({
  kind: "test-watched",
  owner: "none",
  payload: Schema.Struct({ ms: Schema.Int, everyMs: Schema.Int }),
  concurrency: 2,
  maxAttempts: 1,
  timeout: "1 minute",
  stallAfter: "1500 millis",
  watchProgress: true
})
type WatchedPayload = typeof Watched.payload.Type

const greeted: Array<{ readonly taskId: string; readonly name: string; readonly attempt: number; readonly at: number }> = []
const interrupted = new Set<string>()
const gaveUp: Array<{ readonly taskId: string; readonly reason: GiveUpReason }> = []
const stamped: Array<{ readonly jobId: JobId; readonly label: string }> = []

const greetHandler: TaskHandler<GreetPayload, "none"> = {
  ...Greet,
  run: (task: TaskRun<GreetPayload, "none">) =>
    Effect.gen(function*() {
      greeted.push({ taskId: task.taskId, name: task.payload.name, attempt: task.attempt, at: Date.now() })
      yield* Effect.sleep(task.payload.ms).pipe(Effect.onInterrupt(() => Effect.sync(() => interrupted.add(task.taskId))))
      if (task.attempt <= task.payload.failTimes) return yield* new TaskFailed({ reason: `planned failure ${task.attempt}` })
    }),
  giveUp: (task: GivenUpTask<GreetPayload, "none">, reason) => Effect.sync(() => gaveUp.push({ taskId: task.taskId, reason }))
}

const stampHandler: TaskHandler<typeof Stamp.payload.Type, "job"> = {
  ...Stamp,
  run: (task) => Effect.sync(() => void stamped.push({ jobId: task.jobId, label: task.payload.label })),
  giveUp: (task, reason) => Effect.sync(() => gaveUp.push({ taskId: task.taskId, reason }))
}

const watchedHandler: TaskHandler<WatchedPayload, "none"> = {
  ...Watched,
  run: (task: TaskRun<WatchedPayload, "none">) =>
    Effect.gen(function*() {
      const until = Date.now() + task.payload.ms
      while (Date.now() < until) {
        yield* Effect.sleep(task.payload.everyMs === 0 ? 100 : task.payload.everyMs)
        if (task.payload.everyMs > 0) yield* task.progressed
      }
    }),
  giveUp: (task: GivenUpTask<WatchedPayload, "none">, reason) => Effect.sync(() => gaveUp.push({ taskId: task.taskId, reason }))
}

let engine: Engine
beforeAll(async () => {
  engine = await startEngine("work-task-kinds", { handlers: [greetHandler, stampHandler, watchedHandler] })
}, 120_000)
afterAll(async () => {
  await engine?.close()
})

const row = (id: string) => engine.run(TaskStore.use((store) => store.get(id))).then(Option.getOrThrow)
const ended = (id: string, timeoutMs = 30_000) =>
  eventually(async () => {
    const task = await row(id)
    return task.status === "done" || task.status === "failed" ? task : undefined
  }, `task ${id} to end`, timeoutMs)
/** Without a job a task is unique per key: each call here is a new task unless `key` is given. */
const greet = (payload: GreetPayload, key: string = randomUUID()) =>
  engine.run(Tasks.use((tasks) => tasks.submit(Greet, { jobId: null, payload, key })))

describe("a task kind declared in one file", () => {
  it("runs without a job, with its typed payload stored as JSON; one task per key", async () => {
    const key = randomUUID()
    const [a, b] = await Promise.all([greet({ name: "Ada", failTimes: 0, ms: 10 }, key), greet({ name: "Ada", failTimes: 0, ms: 10 }, key)])
    expect(a).toBe(b)
    const done = await ended(a!)
    expect(done).toMatchObject({ status: "done", attempts: 1, job_id: null, sub_key: key, payload: { name: "Ada", failTimes: 0, ms: 10 } })
    expect(greeted.filter((g) => g.taskId === a)).toEqual([expect.objectContaining({ name: "Ada", attempt: 1 })])
  })

  it("runs a job's task with the job id and its payload", async () => {
    const jobId = JobId.make(randomUUID())
    const id = await engine.run(Tasks.use((tasks) => tasks.submit(Stamp, { jobId, payload: { label: "first" } })))
    expect(await ended(id)).toMatchObject({ status: "done", job_id: jobId, payload: { label: "first" } })
    expect(stamped).toContainEqual({ jobId, label: "first" })
  })

  it("a failed attempt waits its kind's backoff as not_before in the row, then runs again", async () => {
    const id = await greet({ name: "Grace", failTimes: 1, ms: 10 })
    const waiting = await eventually(async () => {
      const task = await row(id)
      return task.status === "pending" && task.attempts === 1 ? task : undefined
    }, "the failed first attempt")
    expect(waiting.last_error).toMatch(/planned failure 1/)
    expect(waiting.not_before).not.toBeNull()
    expect(waiting.not_before!.getTime() - waiting.attempt_at!.getTime()).toBeGreaterThanOrEqual(1_500)
    expect(await ended(id)).toMatchObject({ status: "done", attempts: 2, not_before: null })
    const [first, second] = greeted.filter((g) => g.taskId === id)
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1_500 - 20)
  })

  it("the backoff is kept over a restart: the waiting task runs after not_before on the new engine", async () => {
    const id = await greet({ name: "Hedy", failTimes: 1, ms: 10 })
    // One read per check: separate reads could see the task pending before its first claim and then running.
    const waiting = await eventually(async () => {
      const current = await row(id)
      return current.status === "pending" && current.attempts === 1 ? current : undefined
    }, "the failed first attempt")
    const notBefore = waiting.not_before!.getTime()
    await engine.restart()
    expect(await ended(id)).toMatchObject({ status: "done", attempts: 2 })
    const second = greeted.filter((g) => g.taskId === id)[1]!
    expect(second.at).toBeGreaterThanOrEqual(notBefore - 20)
  })

  it("the engine beats the lease; an attempt whose lease is lost is interrupted and writes nothing", async () => {
    const id = await greet({ name: "Barbara", failTimes: 0, ms: 20_000 })
    await eventually(async () => ((await row(id)).status === "running" ? true : undefined), "the attempt to start")
    const started = await row(id)
    // Beaten by the engine alone (the handler only sleeps): the heartbeat moves on.
    await eventually(
      async () => ((await row(id)).heartbeat_at!.getTime() > started.heartbeat_at!.getTime() ? true : undefined),
      "a lease beat"
    )
    // Given up elsewhere (a supervisor on another process, say): the run token is cleared.
    expect(await engine.run(TaskStore.use((store) => store.markFailed(id, "given up elsewhere")))).toBe(true)
    await eventually(async () => (interrupted.has(id) ? true : undefined), "the attempt to be interrupted", 5_000)
    await sleep(300)
    expect(await row(id)).toMatchObject({ status: "failed", last_error: "given up elsewhere", attempts: 1 })
  })

  it("a kind watching progress is stalled when its attempt reports none, although the lease is beaten", async () => {
    const watched = (payload: WatchedPayload) =>
      engine.run(Tasks.use((tasks) => tasks.submit(Watched, { jobId: null, payload, key: randomUUID() })))
    const [quiet, busy] = await Promise.all([watched({ ms: 6_000, everyMs: 0 }), watched({ ms: 4_000, everyMs: 200 })])
    await eventually(async () => ((await row(quiet!)).status === "running" && (await row(busy!)).status === "running" ? true : undefined), "both attempts to start")
    const started = await row(quiet!)
    await sleep(2_500)
    const silent = await row(quiet!)
    // The process lives: its lease moves on, its progress does not.
    expect(silent.heartbeat_at!.getTime()).toBeGreaterThan(started.heartbeat_at!.getTime())
    expect(silent.progress_at!.getTime()).toBe(started.progress_at!.getTime())
    expect((await row(busy!)).progress_at!.getTime()).toBeGreaterThan(started.progress_at!.getTime())
    await engine.run(TaskSupervisor.use((supervisor) => supervisor.sweep))
    expect(gaveUp.filter((g) => g.taskId === quiet)).toEqual([{ taskId: quiet, reason: "stalled" }])
    expect(await row(quiet!)).toMatchObject({ status: "failed", last_error: "no heartbeat within the stall limit" })
    expect(await ended(busy!)).toMatchObject({ status: "done", attempts: 1 })
    expect(gaveUp.filter((g) => g.taskId === busy)).toEqual([])
  })

  it("a task whose lease expired is not stuck (a runner with a free slot takes it over); one with a live lease and no progress is", async () => {
    const id = await engine.run(Tasks.use((tasks) => tasks.submit(Watched, { jobId: null, payload: { ms: 3_000, everyMs: 0 }, key: randomUUID() })))
    await eventually(async () => ((await row(id)).status === "running" ? true : undefined), "the attempt to start")
    await sleep(300)
    const now = Date.now()
    const stuckIds = (leaseAliveSince: Date) =>
      engine.run(TaskStore.use((store) =>
        store.stuck(Watched.kind, { silentSince: new Date(now), startedBefore: new Date(0), leaseAliveSince })
      )).then((tasks) => tasks.map((task) => task.id))
    // Beaten within the last 10 s, no progress since the claim: a hang.
    expect(await stuckIds(new Date(now - 10_000))).toContain(id)
    // Its lease counted as expired (its process gone): left to the claims.
    expect(await stuckIds(new Date(now + 60_000))).not.toContain(id)
    expect(await ended(id)).toMatchObject({ status: "done" })
  })

  it("a rerun of an ended task runs with the payload it was asked with", async () => {
    const key = randomUUID()
    const id = await greet({ name: "Alan", failTimes: 0, ms: 10 }, key)
    await ended(id!)
    const again = await engine.run(Tasks.use((tasks) =>
      tasks.submit(Greet, { jobId: null, key, rerun: "ended", payload: { name: "Kurt", failTimes: 0, ms: 10 } })
    ))
    expect(again).toBe(id)
    await eventually(async () => (greeted.some((g) => g.taskId === id && g.name === "Kurt") ? true : undefined), "the rerun")
    expect(await ended(id!)).toMatchObject({ status: "done", payload: { name: "Kurt" } })
    // Without a rerun the stored task is left as it is, payload included.
    await greet({ name: "Emmy", failTimes: 0, ms: 10 }, key)
    expect((await row(id!)).payload).toMatchObject({ name: "Kurt" })
  })

  it("a stored payload that does not decode gives the task up at once, without running it", async () => {
    const id = await engine.run(TaskStore.use((store) => store.enqueue("test-greet", null, { subKey: randomUUID(), payload: { name: 42 } })))
    await engine.run(Tasks.use((tasks) => tasks.send(id)))
    const failed = await ended(id)
    expect(failed).toMatchObject({ status: "failed", attempts: 1 })
    expect(failed.last_error).toMatch(/payload does not decode/)
    expect(greeted.some((g) => g.taskId === id)).toBe(false)
    // Its kind is told (without a payload), as when attempts run out.
    expect(gaveUp).toContainEqual({ taskId: id, reason: "exhausted" })
  })

  it("a kind listed twice fails at start", () => {
    expect(() => TaskHandlers.make([greetHandler, stampHandler, greetHandler])).toThrow(/task kind test-greet registered twice/)
  })

  it("a job-owned kind stored without a job is given up at once", async () => {
    const id = await engine.run(TaskStore.use((store) => store.enqueue("test-stamp", null, { subKey: randomUUID(), payload: { label: "orphan" } })))
    await engine.run(Tasks.use((tasks) => tasks.send(id)))
    const failed = await ended(id)
    expect(failed).toMatchObject({ status: "failed" })
    expect(failed.last_error).toMatch(/owned by a job was stored without one/)
    expect(stamped.some((s) => s.label === "orphan")).toBe(false)
    // Its `giveUp` is promised a job id, so it is not called.
    expect(gaveUp.some((g) => g.taskId === id)).toBe(false)
  })
})
