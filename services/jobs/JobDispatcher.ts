/**
 * Hands jobs to the task engine: `dispatch` enqueues the job's `transcribe` task (the stored
 * row, then a volatile wake-up sent in the background) and returns without waiting for the run; once it
 * returns, the job will run even if this process dies right after. Dispatching a job again
 * is harmless: a task that already ended starts over, and its run does nothing for a job
 * that ended (the claim finds nothing) — which is what a restored job needs.
 *
 * `JobReconciler` dispatches every unfinished job once at start, which covers a job whose
 * task was never stored (the process died between creating the job and dispatching it).
 */
import { Context, Effect, Layer } from "effect"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { Tasks } from "../work/Tasks.ts"
import { JobStore } from "./JobStore.ts"

export class JobDispatcher extends Context.Service<JobDispatcher, {
  dispatch(jobId: JobId): Effect.Effect<void>
}>()("verbatim/jobs/JobDispatcher") {
  /** Requires `Tasks` (so `Sharding`: see layers/Cluster.ts). */
  static readonly layer = Layer.effect(
    JobDispatcher,
    Effect.map(Tasks, (tasks) =>
      JobDispatcher.of({
        dispatch: Effect.fn("JobDispatcher.dispatch")(function*(jobId: JobId) {
          yield* tasks.enqueue("transcribe", jobId, { rerun: "ended" })
        })
      }))
  )
}

/** Jobs that have not ended (queued or processing), oldest first: re-dispatched at start. */
export class UnfinishedJobs extends Context.Service<UnfinishedJobs, {
  readonly list: Effect.Effect<ReadonlyArray<JobId>>
}>()("verbatim/jobs/UnfinishedJobs") {
  static readonly layer = Layer.effect(UnfinishedJobs, Effect.map(JobStore, (store) => UnfinishedJobs.of({ list: store.unfinished })))
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
