/**
 * Insights of a finished job: summary, topics, quotes, speakers and chapters, generated on the
 * first request by a background task, stored, and served from the store afterwards (until the
 * transcript is corrected or the job deleted). The payload's shapes are in
 * `src/contract/domain/Insights.ts`.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Insights } from "../domain/Insights.ts"
import { responseHeaders } from "./Document.ts"
import { InsightsNotAvailable, NoSpeech, NotFound, NotReady, pathIdErrors, PaymentRequired } from "./Errors.ts"
import { JobIdParam } from "./JobsApi.ts"
import { RequireAccount } from "./Security.ts"

/** Fewer words than this in the transcript (next to no speech) → 409 NO_SPEECH. */
export const insightsMinimumWords = 3

export const InsightsAnswer = Schema.Struct({ insights: Insights })
export type InsightsAnswer = typeof InsightsAnswer.Type

export class InsightsApi extends HttpApiGroup.make("insights")
  .add(
    HttpApiEndpoint.get("get", "/v1/jobs/:job_id/insights", {
      params: { job_id: JobIdParam },
      success: InsightsAnswer,
      error: [...pathIdErrors, NotFound, NotReady, NoSpeech, PaymentRequired, InsightsNotAvailable]
    }).annotateMerge(OpenApi.annotations({
      summary: "Get a job's insights",
      description: "Summary (a few sentences in spoken order, each with `start`, `end`, `speaker`), topics (key " +
        "phrases of 1–3 words with weights, counts and where they are said), quotes (verbatim, self-contained " +
        "sentences with times), speakers (label, name when the recording says it, talk time, share, turns; " +
        "empty without diarization) and chapters (title, gist, start, end). `providers` says which provider made " +
        "each field: `extractive` (sentence embeddings, no network) or `llm` (a configured OpenAI-compatible " +
        "endpoint, used only when its answer is grounded in the transcript). Generated on the first request — " +
        "the request waits up to 60 seconds — then stored and served as is until the transcript is corrected. " +
        "409 NOT_READY until the job is done; 409 NO_SPEECH when the transcript has no speech or fewer than " +
        `${insightsMinimumWords} words; 402 \`transcript_locked\` (with \`upgrade_url\` and \`checkout_url\`) for a ` +
        "locked job; 503 INSIGHTS_UNAVAILABLE when generation failed (retried in the background) or " +
        "INSIGHTS_PENDING when it is still running, both with `Retry-After`."
    })).annotateMerge(responseHeaders({
      503: { "Retry-After": { description: "Seconds to wait before asking again (the body's `retry_after`).", schema: { type: "integer", minimum: 1 } } }
    }))
  )
  .middleware(RequireAccount)
  .annotateMerge(OpenApi.annotations({ title: "Insights" }))
{}
