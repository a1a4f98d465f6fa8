/**
 * `GET /v1/jobs/{job_id}/insights` as a use case: the caller's finished job → its insights,
 * generated once per transcript version by the `insights` task and served from the store.
 *
 * Order of answers: 404 for a job that is not the caller's; 409 NOT_READY until it is done;
 * 402 `transcript_locked` (with the price list and a pay link) for a locked job; 409 NO_SPEECH
 * when the transcript has no speech or fewer than `MIN_WORDS` (3) words. Then stored insights for
 * the current transcript are answered at once. Otherwise the request enqueues the job's
 * `insights` task (one per job, so concurrent first requests share one generation) and waits
 * for it, up to `waitMs`, reading the store and the task row: stored → answered; the task's
 * attempt failed (or it was given up) → 503 INSIGHTS_UNAVAILABLE (the task retries with
 * backoff by itself); still running at the bound → 503 INSIGHTS_PENDING. Both 503s carry
 * `retry_after`. Speaker names a person gave are applied to what is answered (they win over
 * detected ones), never to what is stored, so renaming needs no regeneration.
 */
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import { InsightsNotAvailable, NoSpeech, NotFound, NotReady, PaymentRequired } from "../../src/contract/api/Errors.ts"
import type { AccountCaller } from "../../src/contract/api/Security.ts"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import type { Insights } from "../../src/contract/domain/Insights.ts"
import { JobAccess, jobNotFound } from "../access/JobAccess.ts"
import { Paywall } from "../billing/Paywall.ts"
import { nameInsights } from "../speakers/ApplyNames.ts"
import { SpeakerNameStore } from "../speakers/SpeakerNameStore.ts"
import { TranscriptAccess } from "../transcripts/TranscriptAccess.ts"
import { Tasks } from "../work/Tasks.ts"
import { TaskStore } from "../work/TaskStore.ts"
import { MIN_WORDS } from "./Insights.ts"
import { type InsightsOutcome, InsightsStore, transcriptHash } from "./InsightsStore.ts"

export interface JobInsightsOptions {
  /** How long a request waits for a generation it started or joined (default 60 s). */
  readonly waitMs?: number
  /** How often the waiting request reads the store (default 200 ms). */
  readonly pollMs?: number
}

/** Seconds a caller is told to wait after a failed generation, and while one runs. */
const retryAfterFailure = 30
const retryAfterPending = 10

export type JobInsightsError = NotFound | NotReady | NoSpeech | PaymentRequired | InsightsNotAvailable

export class JobInsights extends Context.Service<JobInsights, {
  /** `base` is the API root the caller reached (pay links are absolute). */
  get(caller: AccountCaller, jobId: JobId, base: string): Effect.Effect<Insights, JobInsightsError>
}>()("verbatim/insights/JobInsights") {
  static readonly layer = (options: JobInsightsOptions = {}) =>
    Layer.effect(
      JobInsights,
      Effect.gen(function*() {
        const access = yield* JobAccess
        const transcripts = yield* TranscriptAccess
        const paywall = yield* Paywall
        const store = yield* InsightsStore
        const tasks = yield* Tasks
        const taskStore = yield* TaskStore
        const speakerNames = yield* SpeakerNameStore
        const waitMs = options.waitMs ?? 60_000
        const poll = Duration.millis(options.pollMs ?? 200)

        const noSpeech = (words: number) =>
          new NoSpeech({
            error: `The transcript has next to no speech (${words} words; insights need at least ${MIN_WORDS}).`,
            words,
            minimum_words: MIN_WORDS
          })

        const answer = (outcome: InsightsOutcome): Effect.Effect<Insights, NoSpeech> =>
          outcome._tag === "Done" ? Effect.succeed(outcome.insights) : Effect.fail(noSpeech(outcome.words))

        const unavailable = new InsightsNotAvailable({
          error: "Generating the insights failed; it is retried in the background, ask again later.",
          code: "INSIGHTS_UNAVAILABLE",
          retry_after: retryAfterFailure
        })

        /** Waits for the job's insights task to store insights for transcript `hash`. */
        const awaitGeneration = Effect.fnUntraced(function*(jobId: JobId, hash: string) {
          const deadline = (yield* Clock.currentTimeMillis) + waitMs
          let taskId = yield* tasks.enqueue("insights", jobId, { rerun: "ended" })
          let seen = Option.getOrUndefined(yield* taskStore.get(taskId))?.attempts ?? 0
          while (true) {
            const stored = yield* store.get(jobId)
            if (Option.isSome(stored) && stored.value.transcriptHash === hash) return stored.value.outcome
            const task = Option.getOrUndefined(yield* taskStore.get(taskId))
            if (task !== undefined) {
              if (task.status === "failed") return yield* unavailable
              if (task.status === "pending" && task.last_error !== null && task.attempts > seen) return yield* unavailable
              // Ended without insights for this transcript (it changed meanwhile): once more.
              if (task.status === "done") {
                taskId = yield* tasks.enqueue("insights", jobId, { rerun: "ended" })
                seen = 0
              }
            }
            if ((yield* Clock.currentTimeMillis) >= deadline) {
              return yield* new InsightsNotAvailable({
                error: "The insights are still being generated; ask again shortly.",
                code: "INSIGHTS_PENDING",
                retry_after: retryAfterPending
              })
            }
            yield* Effect.sleep(poll)
          }
        })

        const get = Effect.fn("JobInsights.get")(function*(caller: AccountCaller, jobId: JobId, base: string) {
          const job = yield* access.load(caller, jobId).pipe(Effect.catchTag("ClaimTokenRequired", () => Effect.fail(jobNotFound())))
          const transcript = yield* transcripts.ready(job)
          if (job.locked) {
            return yield* yield* paywall.transcriptLocked(
              caller.account.id,
              job.audio_duration_seconds ?? 0,
              base,
              "This transcript is locked until the account has credit for it; its insights are too."
            )
          }
          if (!transcript.speech_detected || transcript.segments.length === 0) return yield* noSpeech(0)
          const hash = transcriptHash(transcript)
          const stored = yield* store.get(job.id)
          const insights = Option.isSome(stored) && stored.value.transcriptHash === hash
            ? yield* answer(stored.value.outcome)
            : yield* answer(yield* awaitGeneration(job.id, hash))
          return nameInsights(insights, yield* speakerNames.get(job.id))
        })

        return JobInsights.of({ get })
      })
    )
}
