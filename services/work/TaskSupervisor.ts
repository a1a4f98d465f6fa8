/**
 * Stall and time-limit checks over running tasks, for tasks whose attempt cannot check
 * itself (its process hangs in native code, or died and no runner has claimed it again
 * yet: a lease expires long before the usual stall limits, so that is rare). A running task whose heartbeat is older than its kind's `stallAfter` is given up
 * as `stalled`; one started more than its kind's `timeout` ago as `timeout`. Giving up
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
          const stuck = yield* store.stuck(handler.kind, { silentSince, startedBefore })
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
