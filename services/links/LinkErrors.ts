/**
 * The two ways link ingestion fails, matching the two moments of `POST /v1/transcribe/url`:
 * - LinkRefused: resolution, before a job exists. The HTTP handler answers 400 with `code` and
 *   `message` as the error body's `code` and `error`; nothing is queued or charged.
 * - SourceFailed: the later download inside the worker. The job ends `failed` with `error_code`,
 *   `error` and `retryable` taken from it.
 */
import { Schema } from "effect"

export const RefusalCode = Schema.Literals([
  "BAD_URL",
  "UNSUPPORTED_HOST",
  "SOURCE_GONE",
  "EPISODE_UNKNOWN",
  "LINK_IS_A_LIST"
])
export type RefusalCode = typeof RefusalCode.Type

export class LinkRefused extends Schema.TaggedError<LinkRefused>()("LinkRefused", {
  code: RefusalCode,
  /** One readable sentence for people. */
  message: Schema.String
}) {}

/** The job `error_code` values that concern a submitted link or its file. */
export const SourceFailureCode = Schema.Literals([
  "SOURCE_UNAVAILABLE",
  "SOURCE_TOO_LARGE",
  "SOURCE_RATE_LIMITED",
  "SOURCE_ACCESS_DENIED",
  "SOURCE_UNREACHABLE",
  "SOURCE_PROTECTED",
  "SOURCE_UNSUPPORTED",
  "NO_AUDIO"
])
export type SourceFailureCode = typeof SourceFailureCode.Type

export class SourceFailed extends Schema.TaggedError<SourceFailed>()("SourceFailed", {
  code: SourceFailureCode,
  message: Schema.String,
  /** Whether submitting the same link again can succeed. */
  retryable: Schema.Boolean,
  /** Seconds the source asked us to wait (429 Retry-After), when it said. */
  retryAfterSeconds: Schema.optionalKey(Schema.Finite)
}) {}
