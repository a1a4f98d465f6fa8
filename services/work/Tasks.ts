/**
 * Enqueueing work. `enqueue` stores the task row (unique per kind, job and sub-key, so
 * enqueueing twice names one task) and then a `Run` message for it in the cluster's
 * message table, and returns without waiting for the run: once it returns, the task will
 * run even if this process dies right after. Sending a task's message again is harmless
 * (messages of one task run one at a time and an ended task is left alone).
 *
 * `TaskReconciler` sends a message for every unfinished task once at start, which covers
 * a task whose row was stored but whose message was not (a crash in between, or a row
 * written inside another transaction — see `JobEventFeed`).
 */
import { Context, Effect, Layer, Schedule } from "effect"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { TaskEntity } from "./TaskEntity.ts"
import type { TaskKind } from "./TaskKind.ts"
import { type EnqueueOptions, TaskStore } from "./TaskStore.ts"

export class Tasks extends Context.Service<Tasks, {
  /** Durable and idempotent per (kind, job, sub-key); returns the task id. */
  enqueue(kind: TaskKind, jobId: JobId, options?: EnqueueOptions): Effect.Effect<string>
  /** Sends the task's message (for rows stored without one). */
  send(taskId: string): Effect.Effect<void>
}>()("verbatim/work/Tasks") {
  /** Requires `Sharding` (see layers/Cluster.ts). */
  static readonly layer = Layer.effect(
    Tasks,
    Effect.gen(function*() {
      const store = yield* TaskStore
      const clientFor = yield* TaskEntity.client
      const send = Effect.fn("Tasks.send")(
        function*(taskId: string) {
          yield* clientFor(taskId).Run(undefined, { discard: true })
        },
        // A storage hiccup is retried briefly; a database that stays away is a defect for
        // the caller, whose task then stays pending and is sent again at start.
        Effect.retry({
          while: (error) => error._tag === "PersistenceError",
          schedule: Schedule.exponential("100 millis", 2),
          times: 4
        }),
        Effect.orDie
      )
      const enqueue = Effect.fn("Tasks.enqueue")(function*(kind: TaskKind, jobId: JobId, options?: EnqueueOptions) {
        const taskId = yield* store.enqueue(kind, jobId, options)
        yield* send(taskId)
        return taskId
      })
      return Tasks.of({ enqueue, send })
    })
  )
}

/** Sends a message for every unfinished task once this runner is up (in the background). */
export const TaskReconciler = Layer.effectDiscard(
  Effect.gen(function*() {
    const tasks = yield* Tasks
    const store = yield* TaskStore
    yield* Effect.gen(function*() {
      const unfinished = yield* store.unfinished
      yield* Effect.forEach(unfinished, (task) => tasks.send(task.id), { discard: true })
      yield* Effect.logInfo("Sent unfinished tasks", { count: unfinished.length })
    }).pipe(
      Effect.catchCause((cause) => Effect.logError("Start-up send of unfinished tasks failed", cause)),
      Effect.forkScoped
    )
  })
)
