/**
 * Turns failures that never reached a typed handler error (unknown routes, undecodable
 * params, payloads or queries, malformed JSON, defects) into the `{ error, code }` body.
 * Bad input always gets a 4xx here; only a genuine defect becomes a 500.
 */
import { Cause, Schema, SchemaIssue } from "effect"
import { HttpServerError, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { SqlError } from "effect/sql"
import {
  BadId,
  MalformedRequest,
  NotFound,
  PayloadTooLarge,
  ServiceError,
  ServiceUnavailable,
  UnsupportedContentType,
  ValidationFailed,
  type ValidationIssue
} from "../contract/api/Errors.ts"

export const errorJson = (status: number, body: { readonly error: string; readonly code: string; readonly [extra: string]: unknown }) =>
  HttpServerResponse.jsonUnsafe(body, { status })

/**
 * An error the contract declares, answered with the class's own status and encoded body,
 * so what the edge writes is what `/openapi.json` describes (and carries no `_tag`).
 */
export const errorResponse = <S extends Schema.Codec<unknown, unknown>>(schema: S, error: S["Type"]) =>
  errorJson(
    statusOfSchema(schema),
    Schema.encodeSync(schema)(error) as { readonly error: string; readonly code: string }
  )

/** The HTTP status a contract error class declares (`httpApiStatus`); 500 if it declares none. */
export const statusOfSchema = (schema: Schema.Top): number => {
  const status = Schema.resolveAnnotations(schema)?.["httpApiStatus"]
  return typeof status === "number" ? status : 500
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const locRoot: Record<string, string> = {
  Payload: "body",
  Query: "query",
  Headers: "header",
  Params: "path"
}

const issuesOf = (kind: string, error: HttpApiError.HttpApiSchemaError): Array<ValidationIssue> =>
  formatter(error.cause.issue).issues.map((issue) => ({
    loc: [locRoot[kind] ?? kind.toLowerCase(), ...(issue.path ?? []).map((p) => typeof p === "number" ? p : String(p))],
    msg: issue.message
  }))

/**
 * HttpApi fails a body that `JSON.parse` refuses with a bare `InvalidValue` issue at the root (no
 * path, no input). A parsed body that does not fit its schema never fails that way: every payload
 * of the contract is a Struct, whose failures are `Composite`, `Pointer`, `Filter`, `InvalidType`
 * or `MissingKey` nodes (test/foundation/http-edge.test.ts holds both answers).
 */
const isJsonSyntax = (error: HttpApiError.HttpApiSchemaError) => error.cause.issue._tag === "InvalidValue"

export type Classified =
  | { readonly _tag: "Response"; readonly response: HttpServerResponse.HttpServerResponse }
  | { readonly _tag: "Defect"; readonly response: HttpServerResponse.HttpServerResponse }

export const classifyFailure = (cause: Cause.Cause<unknown>): Classified => {
  const reasons = [...cause.reasons]
  for (const reason of reasons) {
    const value = reason._tag === "Fail" ? reason.error : reason._tag === "Die" ? reason.defect : undefined
    if (HttpApiError.HttpApiSchemaError.is(value)) {
      if (value.kind === "Params") {
        return {
          _tag: "Response",
          response: errorResponse(BadId, new BadId({ error: "The id in the path is not a valid UUID." }))
        }
      }
      if (value.kind === "Payload" && isJsonSyntax(value)) {
        return {
          _tag: "Response",
          response: errorResponse(
            MalformedRequest,
            new MalformedRequest({ error: "The request body is not valid JSON.", code: "MALFORMED_JSON" })
          )
        }
      }
      if (value.kind === "Payload" || value.kind === "Query" || value.kind === "Headers") {
        const detail = issuesOf(value.kind, value)
        const badSource = detail.some((issue) => issue.loc[0] === "body" && issue.loc[1] === "source")
        return {
          _tag: "Response",
          response: errorResponse(
            ValidationFailed,
            new ValidationFailed({
              error: badSource
                ? "`source` must be one of upload, url, recording, api."
                : `The request has ${detail.length === 1 ? "an invalid field" : "invalid fields"}: see detail.`,
              code: badSource ? "BAD_SOURCE" : "VALIDATION_FAILED",
              detail
            })
          )
        }
      }
    }
    if (HttpApiError.HttpApiPayloadTooLarge.is(value)) {
      return {
        _tag: "Response",
        response: errorResponse(PayloadTooLarge, new PayloadTooLarge({ error: "The request body is too large." }))
      }
    }
    if (HttpServerError.isHttpServerError(value)) {
      if (value.reason._tag === "RouteNotFound") {
        return {
          _tag: "Response",
          response: errorResponse(NotFound, new NotFound({ error: "No such endpoint. The API lives under /v1; see /docs." }))
        }
      }
      if (value.reason._tag === "RequestParseError") {
        return {
          _tag: "Response",
          response: errorResponse(
            MalformedRequest,
            new MalformedRequest({ error: "The request body could not be read.", code: "MALFORMED_REQUEST" })
          )
        }
      }
    }
  }
  // The database (or its connection) is away: a retry can succeed, so 503 with Retry-After, not 500.
  const unavailable = reasons.some((reason) =>
    reason._tag === "Die" && SqlError.isSqlError(reason.defect) && reason.defect.isRetryable
  )
  if (unavailable) {
    return {
      _tag: "Defect",
      response: errorResponse(
        ServiceUnavailable,
        new ServiceUnavailable({
          error: "The service cannot reach its database right now; retry after the Retry-After seconds.",
          retry_after: databaseRetryAfterSeconds
        })
      )
    }
  }
  return {
    _tag: "Defect",
    response: errorResponse(ServiceError, new ServiceError({ error: "Something went wrong on our side; retry with backoff." }))
  }
}

/** What a client is told to wait when the database is unreachable. */
export const databaseRetryAfterSeconds = 5

/** A `ValidationFailed` (422) for a Schema issue found by a handler itself (multipart fields). */
export const validationFailed = (issue: SchemaIssue.Issue, root: string) => {
  const detail = formatter(issue).issues.map((entry) => ({
    loc: [root, ...(entry.path ?? []).map((p) => typeof p === "number" ? p : String(p))],
    msg: entry.message
  }))
  const badSource = detail.some((entry) => entry.loc[1] === "source")
  return new ValidationFailed({
    error: badSource ? "`source` must be one of upload, url, recording, api." : "The request has invalid fields: see detail.",
    code: badSource ? "BAD_SOURCE" : "VALIDATION_FAILED",
    detail
  })
}

/** The contract's error for each status the router answers by itself. */
const routerErrors: Record<number, (error: string) => HttpServerResponse.HttpServerResponse> = {
  400: (error) => errorResponse(MalformedRequest, new MalformedRequest({ error, code: "BAD_REQUEST" })),
  404: (error) => errorResponse(NotFound, new NotFound({ error })),
  413: (error) => errorResponse(PayloadTooLarge, new PayloadTooLarge({ error })),
  415: (error) => errorResponse(UnsupportedContentType, new UnsupportedContentType({ error })),
  500: (error) => errorResponse(ServiceError, new ServiceError({ error }))
}

/**
 * Error responses produced below our handlers (the router's own 415 for a body type an
 * endpoint does not take, an empty 400) are rewritten into the `{ error, code }` body.
 */
export const normalizeErrorResponse = (response: HttpServerResponse.HttpServerResponse) => {
  if (response.status < 400 || (response.headers["content-type"] ?? "").includes("json")) return response
  const text = response.body._tag === "Uint8Array" ? new TextDecoder().decode(response.body.body).trim() : ""
  const error = text !== "" && text.length < 300
    ? `${text.replace(/\.?$/, ".")}`
    : response.status === 415
    ? "This endpoint does not take that Content-Type; send application/json (or multipart/form-data for files)."
    : "The request could not be processed."
  const make = routerErrors[response.status]
  return make !== undefined
    ? make(error)
    : errorJson(response.status, {
      error,
      code: response.status === 405 ? "METHOD_NOT_ALLOWED" : response.status >= 500 ? "SERVICE_ERROR" : "BAD_REQUEST"
    })
}
