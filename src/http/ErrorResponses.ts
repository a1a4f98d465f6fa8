/**
 * Turns failures that never reached a typed handler error (unknown routes, undecodable
 * params, payloads or queries, malformed JSON, defects) into the `{ error, code }` body.
 * Bad input always gets a 4xx here; only a genuine defect becomes a 500.
 */
import { Cause, SchemaIssue } from "effect"
import { HttpServerError, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { ValidationFailed, type ValidationIssue } from "../contract/api/Errors.ts"

export const errorJson = (status: number, body: { readonly error: string; readonly code: string; readonly [extra: string]: unknown }) =>
  HttpServerResponse.jsonUnsafe(body, { status })

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

/** HttpApi reports an unparsable JSON body as a payload issue "Expected a valid JSON body". */
const isJsonSyntax = (error: HttpApiError.HttpApiSchemaError) =>
  formatter(error.cause.issue).issues.some((issue) => /valid JSON/i.test(issue.message))

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
          response: errorJson(400, { error: "The id in the path is not a valid UUID.", code: "BAD_ID" })
        }
      }
      if (value.kind === "Payload" && isJsonSyntax(value)) {
        return {
          _tag: "Response",
          response: errorJson(400, { error: "The request body is not valid JSON.", code: "MALFORMED_JSON" })
        }
      }
      if (value.kind === "Payload" || value.kind === "Query" || value.kind === "Headers") {
        const detail = issuesOf(value.kind, value)
        const badSource = detail.some((issue) => issue.loc[0] === "body" && issue.loc[1] === "source")
        return {
          _tag: "Response",
          response: errorJson(422, {
            error: badSource
              ? "`source` must be one of upload, url, recording, api."
              : `The request has ${detail.length === 1 ? "an invalid field" : "invalid fields"}: see detail.`,
            code: badSource ? "BAD_SOURCE" : "VALIDATION_FAILED",
            detail
          })
        }
      }
    }
    if (HttpApiError.HttpApiPayloadTooLarge.is(value)) {
      return {
        _tag: "Response",
        response: errorJson(413, { error: "The request body is too large.", code: "PAYLOAD_TOO_LARGE" })
      }
    }
    if (HttpServerError.isHttpServerError(value)) {
      if (value.reason._tag === "RouteNotFound") {
        return {
          _tag: "Response",
          response: errorJson(404, { error: "No such endpoint. The API lives under /v1; see /docs.", code: "NOT_FOUND" })
        }
      }
      if (value.reason._tag === "RequestParseError") {
        return {
          _tag: "Response",
          response: errorJson(400, { error: "The request body could not be read.", code: "MALFORMED_REQUEST" })
        }
      }
    }
  }
  return {
    _tag: "Defect",
    response: errorJson(500, { error: "Something went wrong on our side; retry with backoff.", code: "SERVICE_ERROR" })
  }
}

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

const codeByStatus: Record<number, string> = {
  400: "BAD_REQUEST",
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_CONTENT_TYPE",
  500: "SERVICE_ERROR"
}

/**
 * Error responses produced below our handlers (the router's own 415 for a body type an
 * endpoint does not take, an empty 400) are rewritten into the `{ error, code }` body.
 */
export const normalizeErrorResponse = (response: HttpServerResponse.HttpServerResponse) => {
  if (response.status < 400 || (response.headers["content-type"] ?? "").includes("json")) return response
  const text = response.body._tag === "Uint8Array" ? new TextDecoder().decode(response.body.body).trim() : ""
  const code = codeByStatus[response.status] ?? (response.status >= 500 ? "SERVICE_ERROR" : "BAD_REQUEST")
  const error = text !== "" && text.length < 300
    ? `${text.replace(/\.?$/, ".")}`
    : response.status === 415
    ? "This endpoint does not take that Content-Type; send application/json (or multipart/form-data for files)."
    : "The request could not be processed."
  return errorJson(response.status, { error, code })
}
