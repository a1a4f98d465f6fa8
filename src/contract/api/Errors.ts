/**
 * Every error the public API answers with. The body is `{ error, code }` plus the
 * documented extra fields, nothing else; clients branch on `code` and show `error`.
 * The HTTP status lives on the class so the OpenAPI document and the server agree.
 *
 * Each class keeps a `_tag` for matching inside programs (`Effect.catchTag`), but the tag is
 * omitted when encoding and filled in when decoding: the wire never carries it, and a
 * typed client still gets the class back from a body without it.
 */
import { Effect, Schema } from "effect"

/** A literal `code` field that fills itself in, so `new X({ error })` is enough. */
const code = <C extends string>(value: C) =>
  Schema.Literal(value).pipe(Schema.withConstructorDefault(Effect.succeed(value)))

const message = Schema.String.annotate({ description: "One readable sentence for people." })

/** The fields every error body shares, and the tag that stays off the wire. */
const wire = <Tag extends string>(tag: Tag) => ({ _tag: Schema.tagDefaultOmit(tag), error: message })

export class MissingApiKey extends Schema.Error<MissingApiKey>("MissingApiKey")({
  ...wire("MissingApiKey"),
  code: code("MISSING_API_KEY")
}, { httpApiStatus: 401 }) {}

export class InvalidApiKey extends Schema.Error<InvalidApiKey>("InvalidApiKey")({
  ...wire("InvalidApiKey"),
  code: code("INVALID_API_KEY")
}, { httpApiStatus: 401 }) {}

/** Reads of a keyless sample job need the claim token its submit answer carried. */
export class ClaimTokenRequired extends Schema.Error<ClaimTokenRequired>("ClaimTokenRequired")({
  ...wire("ClaimTokenRequired"),
  code: Schema.Literals(["MISSING_API_KEY", "INVALID_API_KEY"])
}, { httpApiStatus: 401 }) {}

export class RateLimited extends Schema.Error<RateLimited>("RateLimited")({
  ...wire("RateLimited"),
  code: Schema.Literals(["RATE_LIMITED", "QUOTA_EXCEEDED"]),
  /** Seconds until a retry can succeed; also sent as the `Retry-After` header. */
  retry_after: Schema.Int
}, { httpApiStatus: 429 }) {}

export class BadId extends Schema.Error<BadId>("BadId")({
  ...wire("BadId"),
  code: code("BAD_ID")
}, { httpApiStatus: 400 }) {}

export class NotFound extends Schema.Error<NotFound>("NotFound")({
  ...wire("NotFound"),
  code: code("NOT_FOUND")
}, { httpApiStatus: 404 }) {}

/** One entry of a 422 `detail` list: where the problem is and what it is. */
export const ValidationIssue = Schema.Struct({
  loc: Schema.Array(Schema.Union([Schema.String, Schema.Int])),
  msg: Schema.String
})
export type ValidationIssue = typeof ValidationIssue.Type

export class ValidationFailed extends Schema.Error<ValidationFailed>("ValidationFailed")({
  ...wire("ValidationFailed"),
  code: Schema.Literals(["VALIDATION_FAILED", "BAD_SOURCE"]),
  detail: Schema.Array(ValidationIssue)
}, { httpApiStatus: 422 }) {}

export class BadIdempotencyKey extends Schema.Error<BadIdempotencyKey>("BadIdempotencyKey")({
  ...wire("BadIdempotencyKey"),
  code: code("BAD_IDEMPOTENCY_KEY")
}, { httpApiStatus: 400 }) {}

/** Link refusals of `POST /v1/transcribe/url`: nothing is queued or charged. */
export class LinkRefusedError extends Schema.Error<LinkRefusedError>("LinkRefused")({
  ...wire("LinkRefused"),
  code: Schema.Literals(["BAD_URL", "UNSUPPORTED_HOST", "SOURCE_GONE", "EPISODE_UNKNOWN", "LINK_IS_A_LIST"])
}, { httpApiStatus: 400 }) {}

export class FileTooLarge extends Schema.Error<FileTooLarge>("FileTooLarge")({
  ...wire("FileTooLarge"),
  code: Schema.Literals(["FILE_TOO_LARGE", "FILE_TOO_LONG"])
}, { httpApiStatus: 413 }) {}

export class UnsupportedMedia extends Schema.Error<UnsupportedMedia>("UnsupportedMedia")({
  ...wire("UnsupportedMedia"),
  code: Schema.Literals(["BAD_EXT", "BAD_MIME"])
}, { httpApiStatus: 415 }) {}

export class TierForbidden extends Schema.Error<TierForbidden>("TierForbidden")({
  ...wire("TierForbidden"),
  code: code("TIER_FORBIDDEN")
}, { httpApiStatus: 403 }) {}

export class KeyMismatch extends Schema.Error<KeyMismatch>("KeyMismatch")({
  ...wire("KeyMismatch"),
  code: code("KEY_MISMATCH")
}, { httpApiStatus: 403 }) {}

export class ConcurrencyLimit extends Schema.Error<ConcurrencyLimit>("ConcurrencyLimit")({
  ...wire("ConcurrencyLimit"),
  code: code("CONCURRENCY_LIMIT"),
  /** Recordings the plan runs at once. */
  limit: Schema.Int,
  /** Queued or transcribing now. */
  running: Schema.Int,
  retry_after: Schema.Int
}, { httpApiStatus: 429 }) {}

/** The upload ticket's signed URL (or the whole ticket) is past its lifetime: ask for a new one. */
export class UploadExpired extends Schema.Error<UploadExpired>("UploadExpired")({
  ...wire("UploadExpired"),
  code: code("UPLOAD_EXPIRED")
}, { httpApiStatus: 410 }) {}

/** The bytes sent do not match the ticket (`size_bytes`), or nothing was uploaded yet. */
export class UploadIncomplete extends Schema.Error<UploadIncomplete>("UploadIncomplete")({
  ...wire("UploadIncomplete"),
  code: Schema.Literals(["SIZE_MISMATCH", "UPLOAD_MISSING"]),
  expected_bytes: Schema.Int,
  received_bytes: Schema.NullOr(Schema.Int)
}, { httpApiStatus: 400 }) {}

/** The upload already holds all its bytes: they are never replaced (commit them, or ask for a new ticket). */
export class UploadComplete extends Schema.Error<UploadComplete>("UploadComplete")({
  ...wire("UploadComplete"),
  code: code("UPLOAD_COMPLETE")
}, { httpApiStatus: 409 }) {}

export class NotReady extends Schema.Error<NotReady>("NotReady")({
  ...wire("NotReady"),
  code: code("NOT_READY")
}, { httpApiStatus: 409 }) {}

export class UnknownSku extends Schema.Error<UnknownSku>("UnknownSku")({
  ...wire("UnknownSku"),
  code: code("UNKNOWN_SKU"),
  /** The skus on sale now. */
  sellable: Schema.Array(Schema.String)
}, { httpApiStatus: 400 }) {}

/** Lack of credit. With an own key the answer carries a pay link for the pack that covers it. */
export class PaymentRequired extends Schema.Error<PaymentRequired>("PaymentRequired")({
  ...wire("PaymentRequired"),
  code: Schema.Literals(["NO_CREDITS", "INSUFFICIENT_CREDITS_FOR_DURATION", "transcript_locked", "API_ACCESS_REQUIRED"]),
  checkout_url: Schema.optionalKey(Schema.String),
  upgrade_url: Schema.optionalKey(Schema.String),
  balance_minutes: Schema.optionalKey(Schema.Number),
  required_minutes: Schema.optionalKey(Schema.Number)
}, { httpApiStatus: 402 }) {}

export class CreditsUnavailable extends Schema.Error<CreditsUnavailable>("CreditsUnavailable")({
  ...wire("CreditsUnavailable"),
  code: code("CREDITS_UNAVAILABLE")
}, { httpApiStatus: 503 }) {}

/*
 * Answers of the request edge rather than of a handler: the body could not be read, was
 * too large or of a type the route does not take, a browser called, or a defect.
 */

/** `MALFORMED_JSON` for an unparsable JSON body; `MALFORMED_REQUEST` for broken framing. */
export class MalformedRequest extends Schema.Error<MalformedRequest>("MalformedRequest")({
  ...wire("MalformedRequest"),
  code: Schema.Literals(["MALFORMED_JSON", "MALFORMED_REQUEST", "BAD_REQUEST"])
}, { httpApiStatus: 400 }) {}

export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")({
  ...wire("PayloadTooLarge"),
  code: code("PAYLOAD_TOO_LARGE")
}, { httpApiStatus: 413 }) {}

/** The request's Content-Type is not one the route takes (JSON, or multipart for files). */
export class UnsupportedContentType extends Schema.Error<UnsupportedContentType>("UnsupportedContentType")({
  ...wire("UnsupportedContentType"),
  code: code("UNSUPPORTED_CONTENT_TYPE")
}, { httpApiStatus: 415 }) {}

/** Any request carrying `Origin`, and every CORS preflight: the API is for servers and scripts. */
export class BrowserForbidden extends Schema.Error<BrowserForbidden>("BrowserForbidden")({
  ...wire("BrowserForbidden"),
  code: code("BROWSER_FORBIDDEN")
}, { httpApiStatus: 403 }) {}

export class ServiceError extends Schema.Error<ServiceError>("ServiceError")({
  ...wire("ServiceError"),
  code: code("SERVICE_ERROR")
}, { httpApiStatus: 500 }) {}

/** A JSON body over the per-route limit (1 MiB), refused before it is read past the limit. */
export class BodyTooLarge extends Schema.Error<BodyTooLarge>("BodyTooLarge")({
  ...wire("BodyTooLarge"),
  code: code("BODY_TOO_LARGE"),
  /** The limit in bytes. */
  limit_bytes: Schema.Int
}, { httpApiStatus: 413 }) {}

/** The database (or another part the answer needs) is unreachable right now; retry after `retry_after` seconds. */
export class ServiceUnavailable extends Schema.Error<ServiceUnavailable>("ServiceUnavailable")({
  ...wire("ServiceUnavailable"),
  code: code("SERVICE_UNAVAILABLE"),
  retry_after: Schema.Int
}, { httpApiStatus: 503 }) {}

/** What every route may answer besides its own errors; the document lists them on each operation. */
export const edgeErrors = [BrowserForbidden, ServiceError, ServiceUnavailable] as const

/** Errors of a route whose path carries a job id (answered before any handler runs). */
export const pathIdErrors = [BadId] as const

/** Errors of a route that decodes a JSON body. */
export const jsonBodyErrors = [MalformedRequest, ValidationFailed, UnsupportedContentType, BodyTooLarge] as const

/*
 * Signed media links (playback and clip videos): authorised by the token in the link, not by a key.
 */

/** A signed media link without its `token`. */
export class LinkTokenMissing extends Schema.Error<LinkTokenMissing>("LinkTokenMissing")({
  ...wire("LinkTokenMissing"),
  code: code("TOKEN_MISSING")
}, { httpApiStatus: 401 }) {}

/** The token was altered, belongs to another resource, or is past its lifetime: fetch a new link. */
export class LinkTokenRejected extends Schema.Error<LinkTokenRejected>("LinkTokenRejected")({
  ...wire("LinkTokenRejected"),
  code: Schema.Literals(["TOKEN_INVALID", "TOKEN_EXPIRED"])
}, { httpApiStatus: 403 }) {}

/** The original audio is past retention or gone from storage; the transcript is still readable. */
export class AudioGone extends Schema.Error<AudioGone>("AudioGone")({
  ...wire("AudioGone"),
  code: Schema.Literals(["AUDIO_EXPIRED", "AUDIO_MISSING"])
}, { httpApiStatus: 410 }) {}

/** No byte of the requested range exists; `Content-Range: bytes * /<size>` gives the size. */
export class RangeNotSatisfiable extends Schema.Error<RangeNotSatisfiable>("RangeNotSatisfiable")({
  ...wire("RangeNotSatisfiable"),
  code: code("RANGE_NOT_SATISFIABLE"),
  size: Schema.Number
}, { httpApiStatus: 416 }) {}

/*
 * Insights (`GET /v1/jobs/{job_id}/insights`).
 */

/** The transcript has too little speech to summarize (no speech, or fewer words than `minimum_words`). */
export class NoSpeech extends Schema.Error<NoSpeech>("NoSpeech")({
  ...wire("NoSpeech"),
  code: code("NO_SPEECH"),
  words: Schema.Int,
  minimum_words: Schema.Int
}, { httpApiStatus: 409 }) {}

/**
 * Insights could not be produced now: `INSIGHTS_UNAVAILABLE` when generation failed (the
 * configured LLM endpoint timed out or failed, the embedding model failed; the task retries
 * with backoff), `INSIGHTS_PENDING` when generation is still running after the request's wait.
 * Nothing half-made is stored; retry after `retry_after` seconds (also the `Retry-After` header).
 */
export class InsightsNotAvailable extends Schema.Error<InsightsNotAvailable>("InsightsNotAvailable")({
  ...wire("InsightsNotAvailable"),
  code: Schema.Literals(["INSIGHTS_UNAVAILABLE", "INSIGHTS_PENDING"]),
  retry_after: Schema.Int
}, { httpApiStatus: 503 }) {}
