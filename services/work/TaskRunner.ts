/**
 * Drives one task to its end inside this process: the engine's side of every attempt.
 * Called by the `Task` entity for each delivered message (so at least once per message,
 * and again after a crash); everything it decides is read from and written to the task row.
 *
 * For one delivery:
 * 1. A task that ended, or of a kind this process does not run, is left alone.
 * 2. A task that has used its attempts (the previous ones crashed the process, say) is
 *    given up as `exhausted` instead of being run again.
 * 3. A task not due yet — its `not_before` (set when an attempt failed) or, for an attempt
 *    cut short by a crash, `attempt_at + backoff · 2^(attempts − 1)` — is not waited for
 *    here: the delivery asks for a wake-up at the due time (`wake`: a cluster message stored
 *    with that delivery time, so it survives a restart and may be served by any runner) and
 *    returns, so no entity sleeps through a backoff.
 * 4. The attempt runs in the kind's pool (its own concurrency), with a fresh run token, its
 *    payload decoded with the kind's Schema, the engine holding its lease (see `beat`
 *    below) and the kind's total time limit. Success ends the task `done`; a failure or
 *    defect leaves it `pending` with `not_before` and the loop goes back to 2; running out
 *    of time gives it up as `timeout`; losing the lease ends the attempt without writing;
 *    an interruption (shutdown, shard moved) gives the attempt back (it does not count)
 *    and leaves the message to be replayed. A stored payload that no longer decodes, or a
 *    job-owned kind stored without a job, can never run: the task is given up at once.
 * Giving up calls the handler's `giveUp` first and then marks the task failed, so a crash
 * in between repeats `giveUp` (which handlers keep idempotent) instead of losing it.
 *
 * Leases: every running attempt's run token is beaten by one loop per process, one UPDATE
 * for all of them every `heartbeatEvery` (default: a third of the shortest `stallAfter`,
 * at most 5 s). A token the UPDATE no longer finds (given up as stalled or timed out by a
 * supervisor, or started over) interrupts its attempt.
 */
import { Cause, Clock, Context, Deferred, Duration, Effect, Layer, Option, Schedule, Schema } from "effect"
import { TaskHandlers } from "./TaskHandlers.ts"
import { type GiveUpReason, NoPayload, TaskFailed, type TaskHandler, type TaskRun } from "./TaskKind.ts"
import { type TaskRecord, TaskStore } from "./TaskStore.ts"
import { makeWorkerPool, type WorkerPoolShape } from "./WorkerPool.ts"

export interface TaskEngineOptions {
  /** Attempts per task unless its kind says otherwise. Default 3. */
  readonly maxAttempts?: number | undefined
  /** Wait before the second attempt unless its kind says otherwise; doubles with each further one. Default 2 seconds. */
  readonly backoff?: Duration.Input | undefined
  /** How often the leases of running attempts are beaten. Default: a third of the shortest `stallAfter`, at most 5 s. */
  readonly heartbeatEvery?: Duration.Input | undefined
}

export const defaultMaxAttempts = 3
export const defaultBackoff: Duration.Input = "2 seconds"
const longestBeatMs = 5_000

const giveUpSentence: Record<GiveUpReason, string> = {
  exhausted: "attempt cap reached",
  stalled: "no heartbeat within the stall limit",
  timeout: "ran past the time limit"
}

/** Asks for another delivery of the task's message: at `at`, or at once when null. */
export type Wake = (at: Date | null) => Effect.Effect<void>

export class TaskRunner extends Context.Service<TaskRunner, {
  /** Makes progress on the task until it ends or must wait (then `wake` is asked for the due time). */
  drive(taskId: string, wake: Wake): Effect.Effect<void>
  /** Gives the task up for `reason` (the handler's `giveUp`, then the row); false if it had ended. */
  giveUp(task: TaskRecord, reason: GiveUpReason): Effect.Effect<boolean>
}>()("verbatim/work/TaskRunner") {
  static readonly layer = (options: TaskEngineOptions = {}) =>
    Layer.effect(
      TaskRunner,
      Effect.gen(function*() {
        const store = yield* TaskStore
        const { handlers, has } = yield* TaskHandlers
        const scope = yield* Effect.scope
        const pools = new Map<string, WorkerPoolShape>()
        for (const handler of handlers.values()) pools.set(handler.kind, yield* makeWorkerPool(handler.concurrency))
        const capOf = (handler: TaskHandler) => handler.maxAttempts ?? options.maxAttempts ?? defaultMaxAttempts
        const backoffOf = (handler: TaskHandler) => Duration.toMillis(handler.backoff ?? options.backoff ?? defaultBackoff)
        const decoders = new Map([...handlers.values()].map((handler) => [
          handler.kind,
          Schema.decodeUnknownEffect(handler.payload ?? NoPayload)
        ]))

        /** Leases held by attempts running in this process: run token → signalled once lost. */
        const leases = new Map<string, Deferred.Deferred<void>>()
        const shortestStall = Math.min(...[...handlers.values()].map((handler) => Duration.toMillis(handler.stallAfter)))
        const beatEvery = options.heartbeatEvery ?? Duration.millis(Math.max(10, Math.min(longestBeatMs, shortestStall / 3)))
        yield* Effect.gen(function*() {
          if (leases.size === 0) return
          const tokens = [...leases.keys()]
          const held = yield* store.beat(tokens)
          for (const token of tokens) {
            const lost = leases.get(token)
            if (!held.has(token) && lost !== undefined) yield* Deferred.succeed(lost, undefined)
          }
        }).pipe(
          // A failed beat is logged and tried again next time: the stall limit is far longer.
          Effect.catchCause((cause) => Effect.logWarning("task lease beat failed", cause)),
          Effect.repeat(Schedule.spaced(beatEvery)),
          Effect.forkIn(scope)
        )

        const giveUp = Effect.fn("TaskRunner.giveUp")(function*(task: TaskRecord, reason: GiveUpReason) {
          const handler = handlers.get(task.kind)
          if (handler !== undefined) {
            const decode = decoders.get(task.kind)!
            const payload = yield* decode(task.payload).pipe(Effect.option)
            yield* handler.giveUp({
              taskId: task.id,
              jobId: task.job_id,
              subKey: task.sub_key,
              attempts: task.attempts,
              ...(Option.isSome(payload) ? { payload: payload.value } : {})
            }, reason)
          }
          return yield* markFailed(task, giveUpSentence[reason])
        })

        const markFailed = Effect.fnUntraced(function*(task: TaskRecord, sentence: string) {
          const marked = yield* store.markFailed(task.id, sentence)
          if (marked) yield* Effect.logWarning(`task ${task.kind} ${task.id} given up: ${sentence}`)
          return marked
        })

        /** A task that can never run (its row does not fit its kind): given up at once. */
        const unrunnable = Effect.fnUntraced(function*(task: TaskRecord, handler: TaskHandler, sentence: string) {
          yield* Effect.logError(`task ${task.kind} ${task.id} cannot run: ${sentence}`)
          if (task.job_id !== null) {
            yield* handler.giveUp({ taskId: task.id, jobId: task.job_id, subKey: task.sub_key, attempts: task.attempts }, "exhausted")
          }
          yield* markFailed(task, sentence)
        })

        /** One attempt, its outcome recorded on the row. */
        const attempt = Effect.fnUntraced(function*(task: TaskRecord, handler: TaskHandler) {
          const begun = yield* store.begin(task.id)
          if (Option.isNone(begun)) return
          const { task: current, token } = begun.value
          const payload = yield* decoders.get(current.kind)!(current.payload).pipe(Effect.option)
          if (Option.isNone(payload)) return yield* unrunnable(current, handler, "its stored payload does not decode with its kind's Schema")
          if ((handler.owner ?? "job") === "job" && current.job_id === null) {
            return yield* unrunnable(current, handler, "a kind owned by a job was stored without one")
          }
          const run: TaskRun = {
            taskId: current.id,
            kind: current.kind,
            jobId: current.job_id,
            payload: payload.value,
            subKey: current.sub_key,
            attempt: current.attempts,
            isRegistered: has
          }
          const lost = yield* Deferred.make<void>()
          leases.set(token, lost)
          const now = yield* Clock.currentTimeMillis
          const fields = { task_id: current.id, job_id: current.job_id, kind: current.kind, attempt: current.attempts }
          yield* Effect.logInfo("task started").pipe(Effect.annotateLogs(fields))
          const startedAt = current.started_at?.getTime() ?? now
          const remaining = Math.max(0, startedAt + Duration.toMillis(handler.timeout) - now)
          const outcome = yield* handler.run(run).pipe(
            Effect.timeoutOption(remaining),
            Effect.map((finished) => Option.isSome(finished) ? "done" as const : "timeout" as const),
            Effect.raceFirst(Effect.as(Deferred.await(lost), "lost" as const)),
            Effect.catchCause((cause) => {
              if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
              // A typed failure records its reason; a defect its trace.
              const failed = cause.reasons.find((reason) => reason._tag === "Fail")
              return Effect.succeed({
                failed: failed?._tag === "Fail" && failed.error instanceof TaskFailed ? failed.error.reason : Cause.pretty(cause)
              })
            }),
            Effect.onInterrupt(() => store.release(current.id, token)),
            Effect.ensuring(Effect.sync(() => leases.delete(token)))
          )
          // One line per attempt's end (its start is logged above): job, kind, duration, outcome.
          yield* Effect.logInfo("task ended").pipe(Effect.annotateLogs({
            ...fields,
            duration_ms: (yield* Clock.currentTimeMillis) - now,
            outcome: typeof outcome === "string" ? outcome : "failed"
          }))
          if (outcome === "done") {
            yield* store.finish(current.id, token)
          } else if (outcome === "timeout") {
            yield* giveUp(current, "timeout")
          } else if (outcome === "lost") {
            yield* Effect.logWarning(`task ${current.kind} ${current.id}: attempt ${current.attempts} lost its lease; nothing recorded`)
          } else {
            yield* Effect.logWarning(`task ${current.kind} ${current.id}: attempt ${current.attempts} failed`, outcome.failed)
            const notBefore = new Date((yield* Clock.currentTimeMillis) + backoffOf(handler) * 2 ** (current.attempts - 1))
            yield* store.retryLater(current.id, token, outcome.failed.slice(0, 2000), notBefore)
          }
        })

        /** When the task may be attempted next (epoch ms; 0 = now). */
        const dueAt = (task: TaskRecord, handler: TaskHandler) => {
          if (task.not_before !== null) return task.not_before.getTime()
          // An attempt that ended without recording its outcome (its process died): the same backoff.
          if (task.attempts > 0 && task.attempt_at !== null) return task.attempt_at.getTime() + backoffOf(handler) * 2 ** (task.attempts - 1)
          return 0
        }

        const drive = Effect.fn("TaskRunner.drive")(function*(taskId: string, wake: Wake): Effect.fn.Return<void> {
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
            const due = dueAt(task, handler)
            const wait = due - (yield* Clock.currentTimeMillis)
            if (wait > 0) {
              // Durable: a message delivered at the due time. Prompt: a timer in this process
              // (the stored message is read at the next storage poll, up to 5 s late).
              yield* wake(new Date(due))
              yield* Effect.sleep(Duration.millis(wait)).pipe(Effect.andThen(wake(null)), Effect.forkIn(scope))
              return
            }
            yield* pool.run(`${task.kind}:${task.id}`, attempt(task, handler))
          }
        })

        return TaskRunner.of({ drive, giveUp })
      })
    )
}
