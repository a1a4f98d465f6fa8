/**
 * The `index` task kind: brings a job's passages in the library index in line with the job as
 * it is now. One task per job (sub-key ""), asked for by `SearchIndexing` on every job event
 * with `rerun: "latest"`, so a correction arriving while an attempt runs starts it over.
 *
 * An attempt reads the job: an account's job that is `done` with its transcript is (re)indexed
 * (`SearchIndex.indexJob` replaces the job's passages, so running twice is harmless); anything
 * else — deleted, purged (the row is gone), failed, a keyless sample — has its passages
 * removed. Reconciling to the current state rather than replaying the event makes the order of
 * attempts irrelevant: delete-then-restore and restore-then-delete both end as the job is.
 * Locked jobs are indexed; library search hides them until they are unlocked.
 *
 * Registration: `IndexTask` in `taskKinds` (layers/App.ts), with `SearchIndex`.
 */
import { Duration, Effect, Option } from "effect"
import { SearchIndex } from "../../search/SearchIndex.ts"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { JobStore } from "../jobs/JobStore.ts"
import { TranscriptStore } from "../jobs/TranscriptStore.ts"
import { type GivenUpTask, NoPayload, type TaskHandler, taskKind, type TaskRun } from "../work/TaskKind.ts"

/** The `index` kind: one task per job, no payload. */
export const Index = taskKind({
  kind: "index",
  payload: NoPayload,
  concurrency: 1,
  maxAttempts: 3,
  timeout: Duration.minutes(30),
  stallAfter: Duration.minutes(10)
})

/** Indexes or removes one job as it stands; returns the passages stored (0 when removed). */
export const syncJob = Effect.fn("IndexTask.syncJob")(function*(jobId: JobId) {
  const jobs = yield* JobStore
  const transcripts = yield* TranscriptStore
  const index = yield* SearchIndex
  const job = yield* jobs.get(jobId)
  if (Option.isNone(job) || job.value.status !== "done" || job.value.account_id === null) {
    yield* index.removeJob(jobId)
    return 0
  }
  const transcript = yield* transcripts.get(jobId)
  if (Option.isNone(transcript)) {
    yield* index.removeJob(jobId)
    return 0
  }
  return yield* index.indexJob(job.value.account_id, jobId, {
    filename: job.value.filename,
    language: transcript.value.language ?? job.value.language,
    created_at: job.value.created_at
  }, transcript.value)
})

export const IndexTask = Effect.gen(function*() {
  const context = yield* Effect.context<JobStore | TranscriptStore | SearchIndex>()

  const run = Effect.fn("IndexTask.run")(function*(task: TaskRun<null, "job">) {
    const passages = yield* syncJob(task.jobId).pipe(Effect.provideContext(context))
    yield* Effect.logDebug("job indexed", { job_id: task.jobId, passages })
  })

  const giveUp = Effect.fn("IndexTask.giveUp")(function*(task: GivenUpTask<null, "job">, reason: string) {
    yield* Effect.logWarning("indexing a job for library search given up; `verbatim admin search reindex` repairs it", {
      job_id: task.jobId,
      attempts: task.attempts,
      reason
    })
  })

  return { ...Index, run, giveUp } satisfies TaskHandler<null, "job">
})
