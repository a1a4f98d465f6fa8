/**
 * Stall and time-limit checks over running tasks, for tasks whose attempt cannot check
 * itself. A running task whose lease is alive (its process beats it) but silent, or for a kind
 * with `watchProgress` without progress, for its kind's `stallAfter` is given up as `stalled`
 * (a hang: in native code, or an ONNX run in a worker thread); one started more than its kind's
 * `timeout` ago as `timeout`. A task whose lease expired is left to the claims: its process is
 * gone, and a runner with a free slot starts it again (counted as an attempt). Giving up
 * clears the run token, so an attempt that wakes up later writes nothing. Idempotent: any
 * number of processes may sweep at once.
 *
 * Silence counts only from this process's start: after an outage longer than `stallAfter`
 * the tasks that were running when everything stopped are claimed again (their leases have
 * expired, and a new attempt beats at once), so an old heartbeat then says nothing
 * about the task. A runner that dies while this process lives is still caught in time.
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { TaskHandlers } from "./TaskHandlers.ts"
import { TaskRunner } from "./TaskRunner.ts"
import { TaskStore } from "./TaskStore.ts"

export class TaskSupervisor extends Context.Service<TaskSupervisor, {
  /** One pass; returns how many tasks were given up. */
  readonly sweep: Effect.Effect<number>
}>()("verbatim/work/TaskSupervisor") {
  static readonly layer = Layer.effect(
    TaskSupervisor,
    Effect.gen(function*() {
      const store = yield* TaskStore
      const runner = yield* TaskRunner
      const { handlers } = yield* TaskHandlers
      const startedAt = yield* Clock.currentTimeMillis
      const sweep = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        let givenUp = 0
        for (const handler of handlers.values()) {
          // Silence is counted from max(heartbeat, this process's start): before this process
          // has lived `stallAfter`, no heartbeat counts as too old (the epoch is older than all).
          const threshold = now - Duration.toMillis(handler.stallAfter)
          const silentSince = new Date(startedAt < threshold ? threshold : 0)
          const startedBefore = new Date(now - Duration.toMillis(handler.timeout))
          const leaseAliveSince = new Date(now - runner.leaseExpiryMs)
          const stuck = yield* store.stuck(handler.kind, { silentSince, startedBefore, leaseAliveSince })
          for (const task of stuck) {
            const silent = task.progress_at ?? task.heartbeat_at
            const stalled = silent !== null && silent < silentSince
            // One task that cannot be given up must not hide the others.
            const ended = yield* runner.giveUp(task, stalled ? "stalled" : "timeout").pipe(
              Effect.catchCause((cause) => Effect.as(Effect.logWarning(`task ${task.id} could not be given up`, cause), false))
            )
            if (ended) givenUp++
          }
        }
        return givenUp
      }).pipe(Effect.withSpan("TaskSupervisor.sweep"))
      return TaskSupervisor.of({ sweep })
    })
  )
}
