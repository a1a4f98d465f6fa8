/**
 * Enqueueing work. `submit` takes a kind's declaration and its typed payload (encoded with
 * the kind's Schema; the job id required exactly when the kind is owned by a job); `enqueue`
 * is the untyped form for kinds without a payload. Either stores the task row (unique per
 * kind, job and key, so enqueueing twice names one task) — the row is what makes the task
 * run: runners with a free slot claim due rows (TaskRunner) — and then sends a volatile `Run`
 * message for it, the wake-up that makes the shard's owner claim at once instead of at its
 * next poll. It returns without waiting for the run or the wake-up: once it returns, the task
 * will run even if this process dies right after. Sending a task's message again is harmless
 * (it only wakes a runner).
 *
 * There is no start-up pass sending a message per unfinished task (the former
 * `TaskReconciler`): a starting runner claims due tasks from the table at once and then every
 * second, which finds the same tasks, including those a dead runner held once their lease
 * expired; a wake-up sent at start would only reach the shard owner, which claims anyway.
 */
import { Context, Effect, Layer, Schema } from "effect"
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

/** How long a wake-up may wait for its shard's owner before it is dropped. */
const wakeWaitMs = 2_000

export class Tasks extends Context.Service<Tasks, {
  /** Durable and idempotent per (kind, job, sub-key); returns the task id. */
  enqueue(kind: TaskKind, jobId: JobId, options?: Omit<EnqueueOptions, "payload">): Effect.Effect<string>
  /** `enqueue` for a declared kind with its typed payload. */
  submit<P, O extends TaskOwner>(kind: TaskKindSpec<P, O>, request: TaskRequest<P, O>): Effect.Effect<string>
  /** Sends the task's wake-up in the background (for rows stored without one); never fails or waits. */
  send(taskId: string): Effect.Effect<void>
}>()("verbatim/work/Tasks") {
  /** Requires `Sharding` (see layers/Cluster.ts). */
  static readonly layer = Layer.effect(
    Tasks,
    Effect.gen(function*() {
      const store = yield* TaskStore
      const clientFor = yield* TaskEntity.client
      const scope = yield* Effect.scope
      // The wake-up goes in the background: a volatile send to a shard without a live owner
      // (just after a runner was SIGKILLed, until its shards move: ~12 s) is retried by the cluster
      // every 100 ms, which must not hold up the caller (a submit request). After `wakeWaitMs` it
      // is dropped; the runners' claim poll (1 s) runs the task all the same.
      const send = Effect.fn("Tasks.send")(function*(taskId: string) {
        yield* clientFor(taskId).Run(undefined, { discard: true }).pipe(
          Effect.timeout(wakeWaitMs),
          Effect.catchCause((cause) => Effect.logDebug(`wake-up for task ${taskId} dropped; the claim poll finds it`, cause)),
          Effect.forkIn(scope)
        )
      })
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
