/**
 * Runs the tasks of the registered kinds in this process: the engine's side of every attempt.
 *
 * Work is claimed, not assigned: whenever this process has a free slot of a kind (its
 * `concurrency`), it claims the oldest due task of such kinds from the task table
 * (`TaskStore.claim`, `FOR UPDATE SKIP LOCKED`) — a pending task past its `not_before`, or a
 * running one whose lease went silent (its process died). So a process with idle capacity
 * takes queued work whoever enqueued it, and no process idles while another has a queue
 * (with cluster sharding alone, a task ran on the runner owning the hash of its id). The
 * cluster `Task` entity is only the wake-up: its message makes the runner that receives it
 * claim at once; every runner also claims every `pollEvery` (default 1 s) while it has a free slot.
 *
 * One attempt:
 * 1. A claimed task past its attempt cap (earlier attempts crashed their process, say) is
 *    given up as `exhausted` instead of being run again.
 * 2. Its payload is decoded with the kind's Schema; a stored payload that does not decode, or
 *    a job-owned kind stored without a job, can never run: the task is given up at once.
 * 3. The handler runs with the engine holding its lease (see below) and the kind's total time
 *    limit. Success ends the task `done`; a failure or defect leaves it `pending` with
 *    `not_before = now + backoff · 2^(attempt − 1)`, or the kind's `retryDelay(attempt)` (any runner claims it once due: the wait
 *    survives a restart and no one sleeps through it); running out of time gives it up as
 *    `timeout`; losing the lease ends the attempt without writing; an interruption (shutdown,
 *    SIGTERM) gives the attempt back at once (pending, not counted), for any runner to claim.
 * Giving up calls the handler's `giveUp` first and then marks the task failed, so a crash
 * in between repeats `giveUp` (which handlers keep idempotent) instead of losing it.
 *
 * Leases: every running attempt's run token is beaten by one loop per process, one UPDATE
 * for all of them every `heartbeatEvery` (default: a third of the shortest `stallAfter`,
 * at most 2 s). A token the UPDATE no longer finds (given up by a supervisor, or claimed by
 * another runner after the lease expired) interrupts its attempt. A lease silent for
 * `leaseExpiry` (default 3 beats, at least 10 s) is claimable by any runner: a crashed
 * runner's tasks restart on a survivor, counted as an attempt.
 */
import { Cause, Clock, Context, Deferred, Duration, Effect, Layer, Option, Queue, Schedule, Schema } from "effect"
import { TaskHandlers } from "./TaskHandlers.ts"
import { type GiveUpReason, NoPayload, type TaskEnd, TaskFailed, type TaskHandler, type TaskRun } from "./TaskKind.ts"
import { type TaskRecord, TaskStore } from "./TaskStore.ts"

export interface TaskEngineOptions {
  /** Attempts per task unless its kind says otherwise. Default 3. */
  readonly maxAttempts?: number | undefined
  /** Wait before the second attempt unless its kind says otherwise; doubles with each further one. Default 2 seconds. */
  readonly backoff?: Duration.Input | undefined
  /** How often the leases of running attempts are beaten. Default: a third of the shortest `stallAfter`, at most 2 s. */
  readonly heartbeatEvery?: Duration.Input | undefined
  /** How long a silent lease keeps its task from other runners. Default: 3 beats, at least 10 s. */
  readonly leaseExpiry?: Duration.Input | undefined
  /** How often a runner with a free slot looks for due tasks without being woken. Default 1 s. */
  readonly pollEvery?: Duration.Input | undefined
  /** Running tasks are orphans at start (embedded storage: one process, so their runner is gone). */
  readonly orphanRunningAtStart?: boolean | undefined
}

export const defaultMaxAttempts = 3
export const defaultBackoff: Duration.Input = "2 seconds"
const longestBeatMs = 2_000

const giveUpSentence: Record<GiveUpReason, string> = {
  exhausted: "attempt cap reached",
  stalled: "no heartbeat within the stall limit",
  timeout: "ran past the time limit"
}

export class TaskRunner extends Context.Service<TaskRunner, {
  /** A task may be due: claim now if a slot is free (the `Task` entity's message). */
  readonly wake: Effect.Effect<void>
  /** Gives the task up for `reason` (the handler's `giveUp`, then the row); false if it had ended. */
  giveUp(task: TaskRecord, reason: GiveUpReason): Effect.Effect<boolean>
  /** How long a silent lease keeps its task from other runners (the supervisor leaves such tasks to the claims). */
  readonly leaseExpiryMs: number
}>()("verbatim/work/TaskRunner") {
  static readonly layer = (options: TaskEngineOptions = {}) =>
    Layer.effect(
      TaskRunner,
      Effect.gen(function*() {
        const store = yield* TaskStore
        const { handlers, has } = yield* TaskHandlers
        const scope = yield* Effect.scope
        const capOf = (handler: TaskHandler) => handler.maxAttempts ?? options.maxAttempts ?? defaultMaxAttempts
        /** The wait after failed attempt `attempt`: the kind's own schedule, else its backoff doubling. */
        const retryDelayOf = (handler: TaskHandler, attempt: number) =>
          handler.retryDelay === undefined
            ? Duration.toMillis(handler.backoff ?? options.backoff ?? defaultBackoff) * 2 ** (attempt - 1)
            : Duration.toMillis(handler.retryDelay(attempt))
        const decoders = new Map([...handlers.values()].map((handler) => [
          handler.kind,
          Schema.decodeUnknownEffect(handler.payload ?? NoPayload)
        ]))

        /** Leases held by attempts running in this process: run token → signalled once lost. */
        const leases = new Map<string, Deferred.Deferred<void>>()
        /** Tokens whose `progress_at` moves with the next beat: every attempt of a kind without `watchProgress`, else those that reported progress since. */
        const progressed = new Set<string>()
        const watching = new Set<string>()
        const shortestStall = Math.min(...[...handlers.values()].map((handler) => Duration.toMillis(handler.stallAfter)))
        const beatMs = options.heartbeatEvery === undefined
          ? Math.max(10, Math.min(longestBeatMs, shortestStall / 3))
          : Duration.toMillis(options.heartbeatEvery)
        const leaseExpiryMs = options.leaseExpiry === undefined
          ? Math.max(10_000, 3 * beatMs)
          : Duration.toMillis(options.leaseExpiry)
        yield* Effect.gen(function*() {
          if (leases.size === 0) return
          const tokens = [...leases.keys()]
          const moved = tokens.filter((token) => !watching.has(token) || progressed.has(token))
          progressed.clear()
          const held = yield* store.beat(tokens, moved)
          for (const token of tokens) {
            const lost = leases.get(token)
            if (!held.has(token) && lost !== undefined) yield* Deferred.succeed(lost, undefined)
          }
        }).pipe(
          // A failed beat is logged and tried again next time: the lease outlives several beats.
          Effect.catchCause((cause) => Effect.logWarning("task lease beat failed", cause)),
          Effect.repeat(Schedule.spaced(Duration.millis(beatMs))),
          Effect.forkIn(scope)
        )

        const markFailed = Effect.fnUntraced(function*(task: TaskRecord, sentence: string, token?: string) {
          const marked = yield* store.markFailed(task.id, sentence, token)
          if (marked) yield* Effect.logWarning(`task ${task.kind} ${task.id} given up: ${sentence}`)
          return marked
        })

        /**
         * The handler's `giveUp` (with the payload when it still decodes), then the row, ending with
         * `sentence`. With `token` (an attempt giving its own task up) nothing happens once that
         * attempt lost the task: another runner may hold it now.
         */
        const giveUpWith = Effect.fnUntraced(function*(task: TaskRecord, reason: GiveUpReason, sentence: string, token?: string) {
          if (token !== undefined && !(yield* store.holds(task.id, token))) return false
          const handler = handlers.get(task.kind)
          // A job-owned kind's `giveUp` is promised a job id: a row without one only ends.
          if (handler !== undefined && ((handler.owner ?? "job") === "none" || task.job_id !== null)) {
            const payload = yield* decoders.get(task.kind)!(task.payload).pipe(Effect.option)
            yield* handler.giveUp({
              taskId: task.id,
              jobId: task.job_id,
              subKey: task.sub_key,
              attempts: task.attempts,
              ...(Option.isSome(payload) ? { payload: payload.value } : {})
            }, reason)
          }
          return yield* markFailed(task, sentence, token)
        })

        const giveUp = Effect.fn("TaskRunner.giveUp")(function*(task: TaskRecord, reason: GiveUpReason) {
          return yield* giveUpWith(task, reason, giveUpSentence[reason])
        })

        /** An attempt gives its own task up: only while it still holds it. */
        const giveUpOwn = (task: TaskRecord, reason: GiveUpReason, token: string) =>
          giveUpWith(task, reason, giveUpSentence[reason], token)

        /** A task that can never run (its row does not fit its kind): given up at once, as if exhausted. */
        const unrunnable = Effect.fnUntraced(function*(task: TaskRecord, sentence: string, token: string) {
          yield* Effect.logError(`task ${task.kind} ${task.id} cannot run: ${sentence}`)
          yield* giveUpWith(task, "exhausted", sentence, token)
        })

        /** One claimed attempt, its outcome recorded on the row. */
        const attempt = Effect.fnUntraced(function*(current: TaskRecord, token: string, handler: TaskHandler) {
          // Past the cap only when earlier attempts ended without recording it (their process died).
          if (current.attempts > capOf(handler)) return yield* giveUpOwn(current, "exhausted", token)
          const payload = yield* decoders.get(current.kind)!(current.payload).pipe(Effect.option)
          if (Option.isNone(payload)) return yield* unrunnable(current, "its stored payload does not decode with its kind's Schema", token)
          if ((handler.owner ?? "job") === "job" && current.job_id === null) {
            return yield* unrunnable(current, "a kind owned by a job was stored without one", token)
          }
          const run: TaskRun = {
            taskId: current.id,
            kind: current.kind,
            jobId: current.job_id,
            payload: payload.value,
            subKey: current.sub_key,
            attempt: current.attempts,
            isRegistered: has,
            progressed: Effect.sync(() => {
              if (leases.has(token)) progressed.add(token)
            })
          }
          const lost = yield* Deferred.make<void>()
          leases.set(token, lost)
          if (handler.watchProgress === true) watching.add(token)
          const now = yield* Clock.currentTimeMillis
          const fields = { task_id: current.id, job_id: current.job_id, kind: current.kind, attempt: current.attempts }
          yield* Effect.logInfo("task started").pipe(Effect.annotateLogs(fields))
          const startedAt = current.started_at?.getTime() ?? now
          const remaining = Math.max(0, startedAt + Duration.toMillis(handler.timeout) - now)
          let end: TaskEnd | undefined
          const outcome = yield* handler.run(run).pipe(
            Effect.timeoutOption(remaining),
            Effect.map((finished) => {
              if (Option.isNone(finished)) return "timeout" as const
              end = finished.value ?? undefined
              return "done" as const
            }),
            Effect.raceFirst(Effect.as(Deferred.await(lost), "lost" as const)),
            Effect.catchCause((cause) => {
              if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
              // A typed failure records its reason; a defect its trace.
              const failed = cause.reasons.find((reason) => reason._tag === "Fail")
              return Effect.succeed({
                failed: failed?._tag === "Fail" && failed.error instanceof TaskFailed ? failed.error.reason : Cause.pretty(cause)
              })
            }),
            Effect.ensuring(Effect.sync(() => {
              leases.delete(token)
              watching.delete(token)
              progressed.delete(token)
            }))
          )
          // One line per attempt's end (its start is logged above): job, kind, duration, outcome.
          yield* Effect.logInfo("task ended").pipe(Effect.annotateLogs({
            ...fields,
            duration_ms: (yield* Clock.currentTimeMillis) - now,
            outcome: typeof outcome === "string" ? outcome : "failed",
            ...(end === undefined ? {} : end)
          }))
          if (outcome === "done") {
            yield* store.finish(current.id, token)
          } else if (outcome === "timeout") {
            yield* giveUpOwn(current, "timeout", token)
          } else if (outcome === "lost") {
            yield* Effect.logWarning(`task ${current.kind} ${current.id}: attempt ${current.attempts} lost its lease; nothing recorded`)
          } else {
            yield* Effect.logWarning(`task ${current.kind} ${current.id}: attempt ${current.attempts} failed`, outcome.failed)
            if (current.attempts >= capOf(handler)) return yield* giveUpOwn(current, "exhausted", token)
            const notBefore = new Date((yield* Clock.currentTimeMillis) + retryDelayOf(handler, current.attempts))
            yield* store.retryLater(current.id, token, outcome.failed.slice(0, 2000), notBefore)
          }
        })

        // The claim loop: while a kind has a free slot, claim its oldest due task and run it.
        const running = new Map([...handlers.keys()].map((kind) => [kind, 0]))
        const wakeUps = yield* Queue.sliding<void>(1)
        const wake = Queue.offer(wakeUps, undefined).pipe(Effect.asVoid)
        const pollMs = Duration.toMillis(options.pollEvery ?? "1 second")
        if (options.orphanRunningAtStart === true) yield* store.orphanRunning

        /** Forks the attempt of a claimed task, interruptible again (`restore`) once it runs on its own fiber. */
        const runClaimed = (
          task: TaskRecord,
          token: string,
          handler: TaskHandler,
          restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
        ) =>
          restore(attempt(task, token, handler)).pipe(
            // Interrupted anywhere (also before its handler started): the claim goes back at once.
            Effect.onInterrupt(() => store.release(task.id, token)),
            Effect.catchCause((cause) =>
              Cause.hasInterruptsOnly(cause) ? Effect.interrupt : Effect.logError("task attempt ended with a defect", cause)
            ),
            Effect.annotateLogs({ worker: `${task.kind}:${task.id}` }),
            Effect.ensuring(Effect.andThen(Effect.sync(() => running.set(task.kind, running.get(task.kind)! - 1)), wake)),
            Effect.forkIn(scope)
          )

        yield* Effect.gen(function*() {
          while (true) {
            const free = [...handlers.values()].filter((handler) => running.get(handler.kind)! < Math.max(1, handler.concurrency))
            const now = yield* Clock.currentTimeMillis
            // A claim and the fork of its attempt are not interrupted in between (a shutdown then):
            // a claimed row nobody runs would wait out its lease and cost an attempt.
            const claimed = free.length === 0 ? Option.none() : yield* Effect.uninterruptibleMask((restore) =>
              store.claim(free.map((handler) => handler.kind), new Date(now - leaseExpiryMs)).pipe(
                Effect.catchCause((cause) => Effect.as(Effect.logWarning("claiming a task failed", cause), Option.none())),
                Effect.tap((claimed) => {
                  if (Option.isNone(claimed)) return Effect.void
                  const { task, token } = claimed.value
                  running.set(task.kind, running.get(task.kind)! + 1)
                  return runClaimed(task, token, handlers.get(task.kind)!, restore)
                })
              )
            )
            if (Option.isSome(claimed)) continue
            // Nothing due, or no free slot: wait for a wake-up (a message, a slot freed) or the next poll.
            yield* Queue.take(wakeUps).pipe(Effect.timeoutOption(pollMs))
          }
        }).pipe(Effect.forkIn(scope))

        return TaskRunner.of({ wake, giveUp, leaseExpiryMs })
      })
    )
}
