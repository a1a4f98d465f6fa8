/**
 * The `insights` task kind: one task per job (sub-key ""), enqueued by the first request for a
 * job's insights (`JobInsights`), so concurrent first requests share one generation.
 *
 * One attempt reads the job's current transcript; when the store already holds insights for
 * exactly this transcript (a task run again after it ended) it does nothing. Otherwise it
 * generates them (`InsightsGenerator`; the engine holds the task's lease meanwhile) and stores the
 * outcome: the payload, or `no_speech` when the transcript has too few words. A failed generation
 * (`InsightsUnavailable`: the LLM endpoint timed out or failed, the embedder failed) stores
 * nothing and fails the attempt, which the engine retries with backoff up to three attempts.
 * A job deleted, or not done, meanwhile is left alone.
 *
 * Registration: `InsightsTask` in `taskKinds` (layers/App.ts), with `InsightsStore`
 * and an `InsightsGenerator` provided.
 */
import { Clock, Duration, Effect, Option } from "effect"
import { JobStore } from "../jobs/JobStore.ts"
import { TranscriptStore } from "../jobs/TranscriptStore.ts"
import { type GivenUpTask, NoPayload, type TaskHandler, TaskFailed, taskKind, type TaskRun } from "../work/TaskKind.ts"
import { InsightsGenerator } from "./InsightsGenerator.ts"
import { type InsightsOutcome, InsightsStore, transcriptHash } from "./InsightsStore.ts"

/** The `insights` kind: one task per job, no payload. */
export const Insights = taskKind({
  kind: "insights",
  payload: NoPayload,
  concurrency: 1,
  maxAttempts: 3,
  timeout: Duration.minutes(30),
  stallAfter: Duration.minutes(2)
})

export const InsightsTask = Effect.gen(function*() {
  const jobs = yield* JobStore
  const transcripts = yield* TranscriptStore
  const store = yield* InsightsStore
  const generator = yield* InsightsGenerator

  const run = Effect.fn("InsightsTask.run")(function*(task: TaskRun<null, "job">) {
    const job = yield* jobs.get(task.jobId)
    if (Option.isNone(job) || job.value.status !== "done") return
    const transcript = yield* transcripts.get(task.jobId)
    if (Option.isNone(transcript)) return
    const hash = transcriptHash(transcript.value)
    const stored = yield* store.get(task.jobId)
    if (Option.isSome(stored) && stored.value.transcriptHash === hash) return

    const started = yield* Clock.currentTimeMillis
    const generated = yield* generator.generate(transcript.value).pipe(
      Effect.map((insights): InsightsOutcome => ({ _tag: "Done", insights })),
      Effect.catchTag("NotEnoughSpeech", (e) => Effect.succeed<InsightsOutcome>({ _tag: "NoSpeech", words: e.words })),
      Effect.mapError((e) => new TaskFailed({ reason: `insights generation failed: ${e.reason}` }))
    )
    const ms = (yield* Clock.currentTimeMillis) - started
    const kept = yield* store.put(task.jobId, hash, generated, ms)
    if (kept) yield* Effect.logInfo("insights generated", { job_id: task.jobId, outcome: generated._tag, ms })
  })

  const giveUp = Effect.fn("InsightsTask.giveUp")(function*(task: GivenUpTask<null, "job">, reason: string) {
    yield* Effect.logWarning("insights generation given up; the next request tries again", {
      job_id: task.jobId,
      attempts: task.attempts,
      reason
    })
  })

  return { ...Insights, run, giveUp } satisfies TaskHandler<null, "job">
})
