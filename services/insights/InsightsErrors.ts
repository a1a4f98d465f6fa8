/**
 * The two ways insight generation fails:
 * - NotEnoughSpeech: no speech was detected, or the transcript has fewer than `minimum` words
 *   (`MIN_WORDS`, 3): next to nothing to summarize. Permanent for this transcript; the endpoint answers 409 `NO_SPEECH`.
 * - InsightsUnavailable: generation could not complete (the LLM endpoint timed out, answered 5xx
 *   or could not be reached; the embedding model failed). The endpoint answers 503 with
 *   `Retry-After` when `retryable`; nothing is stored.
 */
import { Schema } from "effect"

export class NotEnoughSpeech extends Schema.TaggedError<NotEnoughSpeech>()("NotEnoughSpeech", {
  words: Schema.Int,
  minimum: Schema.Int
}) {}

export class InsightsUnavailable extends Schema.TaggedError<InsightsUnavailable>()("InsightsUnavailable", {
  /** What failed, for logs (not shown to callers as is). */
  reason: Schema.String,
  /** True for timeouts, 5xx and unreachable endpoints: the same request may succeed later. */
  retryable: Schema.Boolean
}) {}
