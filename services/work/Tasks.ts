/**
 * Enqueueing work. `submit` takes a kind's declaration and its typed payload (encoded with
 * the kind's Schema; the job id required exactly when the kind is owned by a job); `enqueue`
 * is the untyped form for kinds without a payload. Either stores the task row (unique per
 * kind, job and key, so enqueueing twice names one task) — the row is what makes the task
 * run: runners with a free slot claim due rows (TaskRunner) — and then a `Run` message for it
 * in the cluster's message table, the wake-up that makes the shard's owner claim at once
 * instead of at its next poll. It returns without waiting for the run: once it returns, the
 * task will run even if this process dies right after. Sending a task's message again is
 * harmless (it only wakes a runner).
 *
 * `TaskReconciler` sends a message for every unfinished task once at start (a prompt start
 * for work left over; the runners' polls would find it within a second as well).
 */
import { Context, Effect, Layer, Schedule, Schema } from "effect"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { TaskEntity } from "./TaskEntity.ts"
import type { OwnerId, TaskKind, TaskKindSpec, TaskOwner } from "./TaskKind.ts"
import { type EnqueueOptions, TaskStore } from "./TaskStore.ts"

/** One task of a declared kind: its payload, its job (exactly when the kind is owned by one), its key. */
export interface TaskRequest<P, O extends TaskOwner> {
  readonly jobId: OwnerId<O>
  readonly payload: P
  /** Tells several tasks of one kind (and job) apart; "" by default. Enqueueing the same key again names the same task. */
  readonly key?: string | undefined
  readonly rerun?: EnqueueOptions["rerun"]
}

/** Stores a task of a declared kind (joins the caller's transaction); returns its id. Send its message afterwards. */
export const storeTask = <P, O extends TaskOwner>(kind: TaskKindSpec<P, O>, request: TaskRequest<P, O>) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const payload = yield* Schema.encodeEffect(kind.payload)(request.payload).pipe(Effect.orDie)
    return yield* store.enqueue(kind.kind, request.jobId, { subKey: request.key, rerun: request.rerun, payload })
  })

export class Tasks extends Context.Service<Tasks, {
  /** Durable and idempotent per (kind, job, sub-key); returns the task id. */
  enqueue(kind: TaskKind, jobId: JobId, options?: Omit<EnqueueOptions, "payload">): Effect.Effect<string>
  /** `enqueue` for a declared kind with its typed payload. */
  submit<P, O extends TaskOwner>(kind: TaskKindSpec<P, O>, request: TaskRequest<P, O>): Effect.Effect<string>
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
      const enqueue = Effect.fn("Tasks.enqueue")(function*(kind: TaskKind, jobId: JobId, options?: Omit<EnqueueOptions, "payload">) {
        const taskId = yield* store.enqueue(kind, jobId, options)
        yield* send(taskId)
        return taskId
      })
      const submit = Effect.fn("Tasks.submit")(function*<P, O extends TaskOwner>(kind: TaskKindSpec<P, O>, request: TaskRequest<P, O>) {
        const taskId = yield* storeTask(kind, request).pipe(Effect.provideService(TaskStore, store))
        yield* send(taskId)
        return taskId
      })
      return Tasks.of({ enqueue, submit, send })
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
