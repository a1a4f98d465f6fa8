/**
 * Drives one task to its end inside this process: the engine's side of every attempt.
 * Called by the `Task` entity for each delivered message (so at least once per message,
 * and again after a crash); everything it decides is read from and written to the task row.
 *
 * For one delivery:
 * 1. A task that ended, or of a kind this process does not run, is left alone.
 * 2. A task that has used its attempts (the previous ones crashed the process, say) is
 *    given up as `exhausted` instead of being run again.
 * 3. A task attempted before waits `backoff · 2^(attempts − 1)` after its last attempt began.
 * 4. The attempt runs in the kind's pool (its own concurrency), with a fresh run token, a
 *    heartbeat for the handler and the kind's total time limit. Success ends the task
 *    `done`; a failure or defect leaves it `pending` and the loop goes back to 2; running
 *    out of time gives it up as `timeout`; an interruption (shutdown, shard moved) gives
 *    the attempt back (it does not count) and leaves the message to be replayed.
 * Giving up calls the handler's `giveUp` first and then marks the task failed, so a crash
 * in between repeats `giveUp` (which handlers keep idempotent) instead of losing it.
 */
import { Cause, Clock, Context, Duration, Effect, Layer, Option } from "effect"
import { TaskHandlers } from "./TaskHandlers.ts"
import type { GiveUpReason, TaskHandler, TaskKind, TaskRun } from "./TaskKind.ts"
import { type TaskRecord, TaskStore } from "./TaskStore.ts"
import { makeWorkerPool, type WorkerPoolShape } from "./WorkerPool.ts"

export interface TaskEngineOptions {
  /** Attempts per task unless its kind says otherwise. Default 3. */
  readonly maxAttempts?: number | undefined
  /** Wait before the second attempt; doubles with each further one. Default 2 seconds. */
  readonly backoff?: Duration.Input | undefined
}

export const defaultMaxAttempts = 3
export const defaultBackoff: Duration.Input = "2 seconds"

const giveUpSentence: Record<GiveUpReason, string> = {
  exhausted: "attempt cap reached",
  stalled: "no heartbeat within the stall limit",
  timeout: "ran past the time limit"
}

export class TaskRunner extends Context.Service<TaskRunner, {
  /** Makes progress on the task until it ends or must wait for a later delivery. */
  drive(taskId: string): Effect.Effect<void>
  /** Gives the task up for `reason` (the handler's `giveUp`, then the row); false if it had ended. */
  giveUp(task: TaskRecord, reason: GiveUpReason): Effect.Effect<boolean>
}>()("verbatim/work/TaskRunner") {
  static readonly layer = (options: TaskEngineOptions = {}) =>
    Layer.effect(
      TaskRunner,
      Effect.gen(function*() {
        const store = yield* TaskStore
        const { handlers, has } = yield* TaskHandlers
        const backoffMs = Duration.toMillis(options.backoff ?? defaultBackoff)
        const pools = new Map<TaskKind, WorkerPoolShape>()
        for (const handler of handlers.values()) pools.set(handler.kind, yield* makeWorkerPool(handler.concurrency))
        const capOf = (handler: TaskHandler) => handler.maxAttempts ?? options.maxAttempts ?? defaultMaxAttempts

        const giveUp = Effect.fn("TaskRunner.giveUp")(function*(task: TaskRecord, reason: GiveUpReason) {
          const handler = handlers.get(task.kind)
          if (handler !== undefined) {
            yield* handler.giveUp({ taskId: task.id, jobId: task.job_id, subKey: task.sub_key, attempts: task.attempts }, reason)
          }
          const marked = yield* store.markFailed(task.id, giveUpSentence[reason])
          if (marked) yield* Effect.logWarning(`task ${task.kind} ${task.id} given up: ${giveUpSentence[reason]}`)
          return marked
        })

        /** One attempt, its outcome recorded on the row. */
        const attempt = Effect.fnUntraced(function*(task: TaskRecord, handler: TaskHandler) {
          const begun = yield* store.begin(task.id)
          if (Option.isNone(begun)) return
          const { task: current, token } = begun.value
          const run: TaskRun = {
            taskId: current.id,
            kind: current.kind,
            jobId: current.job_id,
            subKey: current.sub_key,
            attempt: current.attempts,
            heartbeat: store.heartbeat(current.id, token),
            isRegistered: has
          }
          const now = yield* Clock.currentTimeMillis
          yield* Effect.logInfo("task started").pipe(Effect.annotateLogs({
            task_id: current.id,
            job_id: current.job_id,
            kind: current.kind,
            attempt: current.attempts
          }))
          const startedAt = current.started_at?.getTime() ?? now
          const remaining = Math.max(0, startedAt + Duration.toMillis(handler.timeout) - now)
          const outcome = yield* handler.run(run).pipe(
            Effect.timeoutOption(remaining),
            Effect.map((finished) => Option.isSome(finished) ? "done" as const : "timeout" as const),
            Effect.catchCause((cause) =>
              Cause.hasInterruptsOnly(cause) ? Effect.interrupt : Effect.succeed({ failed: Cause.pretty(cause) })
            ),
            Effect.onInterrupt(() => store.release(current.id, token))
          )
          // One line per attempt's end (its start is logged below, before the run): job, kind, duration, outcome.
          yield* Effect.logInfo("task ended").pipe(Effect.annotateLogs({
            task_id: current.id,
            job_id: current.job_id,
            kind: current.kind,
            attempt: current.attempts,
            duration_ms: (yield* Clock.currentTimeMillis) - now,
            outcome: typeof outcome === "string" ? outcome : "failed"
          }))
          if (outcome === "done") {
            yield* store.finish(current.id, token)
          } else if (outcome === "timeout") {
            yield* giveUp(current, "timeout")
          } else {
            yield* Effect.logWarning(`task ${current.kind} ${current.id}: attempt ${current.attempts} failed`, outcome.failed)
            yield* store.retryLater(current.id, token, outcome.failed.slice(0, 2000))
          }
        })

        const drive = Effect.fn("TaskRunner.drive")(function*(taskId: string): Effect.fn.Return<void> {
          while (true) {
            const found = yield* store.get(taskId)
            if (Option.isNone(found)) return
            const task = found.value
            if (task.status === "done" || task.status === "failed") return
            const handler = handlers.get(task.kind)
            const pool = pools.get(task.kind)
            if (handler === undefined || pool === undefined) {
              // Left pending: a process that runs this kind picks it up (at its start at the latest).
              return yield* Effect.logWarning(`no handler for task kind ${task.kind} in this process; task ${taskId} waits`)
            }
            if (task.attempts >= capOf(handler)) {
              yield* giveUp(task, "exhausted")
              return
            }
            if (task.attempts > 0 && task.attempt_at !== null) {
              const due = task.attempt_at.getTime() + backoffMs * 2 ** (task.attempts - 1)
              const wait = due - (yield* Clock.currentTimeMillis)
              if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
            }
            yield* pool.run(`${task.kind}:${task.id}`, attempt(task, handler))
          }
        })

        return TaskRunner.of({ drive, giveUp })
      })
    )
}
