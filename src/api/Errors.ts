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
