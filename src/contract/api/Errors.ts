/**
 * Every error the public API answers with. The body is `{ error, code }` (plus the
 * tag and any documented extra fields); clients branch on `code` and show `error`.
 * The HTTP status lives on the class so the OpenAPI document and the server agree.
 */
import { Effect, Schema } from "effect"

/** A literal `code` field that fills itself in, so `new X({ error })` is enough. */
const code = <C extends string>(value: C) =>
  Schema.Literal(value).pipe(Schema.withConstructorDefault(Effect.succeed(value)))

const message = Schema.String.annotate({ description: "One readable sentence for people." })

export class MissingApiKey extends Schema.TaggedError<MissingApiKey>()("MissingApiKey", {
  error: message,
  code: code("MISSING_API_KEY")
}, { httpApiStatus: 401 }) {}

export class InvalidApiKey extends Schema.TaggedError<InvalidApiKey>()("InvalidApiKey", {
  error: message,
  code: code("INVALID_API_KEY")
}, { httpApiStatus: 401 }) {}

/** Reads of a keyless sample job need the claim token its submit answer carried. */
export class ClaimTokenRequired extends Schema.TaggedError<ClaimTokenRequired>()("ClaimTokenRequired", {
  error: message,
  code: Schema.Literals(["MISSING_API_KEY", "INVALID_API_KEY"])
}, { httpApiStatus: 401 }) {}

export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  error: message,
  code: Schema.Literals(["RATE_LIMITED", "QUOTA_EXCEEDED"]),
  /** Seconds until a retry can succeed; also sent as the `Retry-After` header. */
  retry_after: Schema.Int
}, { httpApiStatus: 429 }) {}

export class BadId extends Schema.TaggedError<BadId>()("BadId", {
  error: message,
  code: code("BAD_ID")
}, { httpApiStatus: 400 }) {}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  error: message,
  code: code("NOT_FOUND")
}, { httpApiStatus: 404 }) {}

/** One entry of a 422 `detail` list: where the problem is and what it is. */
export const ValidationIssue = Schema.Struct({
  loc: Schema.Array(Schema.Union([Schema.String, Schema.Int])),
  msg: Schema.String
})
export type ValidationIssue = typeof ValidationIssue.Type

export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  error: message,
  code: Schema.Literals(["VALIDATION_FAILED", "BAD_SOURCE"]),
  detail: Schema.Array(ValidationIssue)
}, { httpApiStatus: 422 }) {}

export class BadIdempotencyKey extends Schema.TaggedError<BadIdempotencyKey>()("BadIdempotencyKey", {
  error: message,
  code: code("BAD_IDEMPOTENCY_KEY")
}, { httpApiStatus: 400 }) {}

/** Link refusals of `POST /v1/transcribe/url`: nothing is queued or charged. */
export class LinkRefusedError extends Schema.TaggedError<LinkRefusedError>()("LinkRefused", {
  error: message,
  code: Schema.Literals(["BAD_URL", "UNSUPPORTED_HOST", "SOURCE_GONE", "EPISODE_UNKNOWN", "LINK_IS_A_LIST"])
}, { httpApiStatus: 400 }) {}

export class FileTooLarge extends Schema.TaggedError<FileTooLarge>()("FileTooLarge", {
  error: message,
  code: Schema.Literals(["FILE_TOO_LARGE", "FILE_TOO_LONG"])
}, { httpApiStatus: 413 }) {}

export class UnsupportedMedia extends Schema.TaggedError<UnsupportedMedia>()("UnsupportedMedia", {
  error: message,
  code: Schema.Literals(["BAD_EXT", "BAD_MIME"])
}, { httpApiStatus: 415 }) {}

export class TierForbidden extends Schema.TaggedError<TierForbidden>()("TierForbidden", {
  error: message,
  code: code("TIER_FORBIDDEN")
}, { httpApiStatus: 403 }) {}

export class KeyMismatch extends Schema.TaggedError<KeyMismatch>()("KeyMismatch", {
  error: message,
  code: code("KEY_MISMATCH")
}, { httpApiStatus: 403 }) {}

export class ConcurrencyLimit extends Schema.TaggedError<ConcurrencyLimit>()("ConcurrencyLimit", {
  error: message,
  code: code("CONCURRENCY_LIMIT"),
  /** Recordings the plan runs at once. */
  limit: Schema.Int,
  /** Queued or transcribing now. */
  running: Schema.Int,
  retry_after: Schema.Int
}, { httpApiStatus: 429 }) {}

/** The upload ticket's signed URL (or the whole ticket) is past its lifetime: ask for a new one. */
export class UploadExpired extends Schema.TaggedError<UploadExpired>()("UploadExpired", {
  error: message,
  code: code("UPLOAD_EXPIRED")
}, { httpApiStatus: 410 }) {}

/** The bytes sent do not match the ticket (`size_bytes`), or nothing was uploaded yet. */
export class UploadIncomplete extends Schema.TaggedError<UploadIncomplete>()("UploadIncomplete", {
  error: message,
  code: Schema.Literals(["SIZE_MISMATCH", "UPLOAD_MISSING"]),
  expected_bytes: Schema.Int,
  received_bytes: Schema.NullOr(Schema.Int)
}, { httpApiStatus: 400 }) {}

export class NotReady extends Schema.TaggedError<NotReady>()("NotReady", {
  error: message,
  code: code("NOT_READY")
}, { httpApiStatus: 409 }) {}

export class UnknownSku extends Schema.TaggedError<UnknownSku>()("UnknownSku", {
  error: message,
  code: code("UNKNOWN_SKU"),
  /** The skus on sale now. */
  sellable: Schema.Array(Schema.String)
}, { httpApiStatus: 400 }) {}

/** Lack of credit. With an own key the answer carries a pay link for the pack that covers it. */
export class PaymentRequired extends Schema.TaggedError<PaymentRequired>()("PaymentRequired", {
  error: message,
  code: Schema.Literals(["NO_CREDITS", "INSUFFICIENT_CREDITS_FOR_DURATION", "transcript_locked", "API_ACCESS_REQUIRED"]),
  checkout_url: Schema.optionalKey(Schema.String),
  upgrade_url: Schema.optionalKey(Schema.String),
  balance_minutes: Schema.optionalKey(Schema.Number),
  required_minutes: Schema.optionalKey(Schema.Number)
}, { httpApiStatus: 402 }) {}

export class CreditsUnavailable extends Schema.TaggedError<CreditsUnavailable>()("CreditsUnavailable", {
  error: message,
  code: code("CREDITS_UNAVAILABLE")
}, { httpApiStatus: 503 }) {}
