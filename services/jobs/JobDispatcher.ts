/**
 * Hands jobs to the durable runner. `dispatch` stores a `Process` message for the job in
 * the cluster's message table and returns without waiting for the run: once it returns,
 * the job will run even if this process dies right after (whichever runner owns the job's
 * shard picks the message up). Dispatching a job twice is harmless: the job entity runs
 * its messages one at a time and `JobProcessor.process` does nothing for an ended job.
 *
 * `JobReconciler` dispatches every unfinished job once at start, which covers a job whose
 * message was never stored (the process died between creating the job and dispatching
 * it) or was lost.
 */
import { Context, Effect, Layer, Schedule } from "effect"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { JobEntity } from "./JobEntity.ts"
import { UnfinishedJobs } from "./JobProcessor.ts"

export class JobDispatcher extends Context.Service<JobDispatcher, {
  dispatch(jobId: JobId): Effect.Effect<void>
}>()("verbatim/jobs/JobDispatcher") {
  /** Requires `Sharding` (see layers/Cluster.ts). */
  static readonly layer = Layer.effect(
    JobDispatcher,
    Effect.gen(function*() {
      const clientFor = yield* JobEntity.client
      const dispatch = Effect.fn("JobDispatcher.dispatch")(
        function*(jobId: JobId) {
          yield* clientFor(jobId).Process(undefined, { discard: true })
        },
        // A storage hiccup is retried briefly; a database that stays away is a defect for
        // the caller, whose job then stays unfinished and is dispatched again at start.
        Effect.retry({
          while: (error) => error._tag === "PersistenceError",
          schedule: Schedule.exponential("100 millis", 2),
          times: 4
        }),
        Effect.orDie
      )
      return JobDispatcher.of({ dispatch })
    })
  )
}

/** Dispatches every unfinished job once this runner is up (in the background). */
export const JobReconciler = Layer.effectDiscard(
  Effect.gen(function*() {
    const dispatcher = yield* JobDispatcher
    const unfinished = yield* UnfinishedJobs
    yield* Effect.gen(function*() {
      const ids = yield* unfinished.list
      yield* Effect.forEach(ids, dispatcher.dispatch, { discard: true })
      yield* Effect.logInfo("Dispatched unfinished jobs", { count: ids.length })
    }).pipe(
      Effect.catchCause((cause) => Effect.logError("Start-up dispatch of unfinished jobs failed", cause)),
      Effect.forkScoped
    )
  })
)
