/**
 * Checks every request meets before any route sees it, so hostile input is a 4xx and never
 * reaches Postgres or the heap unbounded:
 * - a JSON body is at most `maxJsonBodyBytes`: a larger declared `Content-Length` is refused
 *   before anything is read, a chunked body stops being read at the limit (413
 *   `BODY_TOO_LARGE`). Multipart submits and the raw upload PUT stream to storage under
 *   their own limits and are not read here;
 * - JSON nested deeper than `maxJsonDepth` is refused (422);
 * - a string anywhere in a JSON body or the query that holds a NUL character or a lone
 *   UTF-16 surrogate (Postgres text cannot store either) is 422 with its location.
 * A body that is not valid JSON is left to the route, which answers 400 MALFORMED_JSON.
 */
import { ByteSize, Effect, Option } from "effect"
import { HttpIncomingMessage, type HttpServerRequest } from "effect/http"
import { BodyTooLarge, ValidationFailed, type ValidationIssue } from "../contract/api/Errors.ts"
import { errorResponse } from "./ErrorResponses.ts"

export const maxJsonBodyBytes = 1024 * 1024
export const maxJsonDepth = 32

/** Routes whose body is streamed by their handler rather than read whole. */
const streamedBody = (path: string, contentType: string) =>
  contentType.startsWith("multipart/") || /^\/v1\/uploads\/[^/]+\/bytes$/.test(path)

const isJson = (contentType: string) => /^application\/([\w.+-]+\+)?json\b/.test(contentType)

/** Why a string cannot be stored, or undefined when it can. */
const unstorable = (value: string): string | undefined =>
  value.includes("\u0000") ? "Contains a NUL character" : value.isWellFormed() ? undefined : "Contains a lone UTF-16 surrogate"

/** The first bad string (or the depth overflow) in a parsed JSON value, with its path. */
const findIssue = (value: unknown, path: Array<string | number>, depth: number): ValidationIssue | undefined => {
  if (typeof value === "string") {
    const reason = unstorable(value)
    return reason === undefined ? undefined : { loc: ["body", ...path], msg: reason }
  }
  if (value === null || typeof value !== "object") return undefined
  if (depth >= maxJsonDepth) return { loc: ["body", ...path], msg: `Nested deeper than ${maxJsonDepth} levels` }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findIssue(value[i], [...path, i], depth + 1)
      if (found !== undefined) return found
    }
    return undefined
  }
  for (const [key, inner] of Object.entries(value)) {
    const keyReason = unstorable(key)
    if (keyReason !== undefined) return { loc: ["body", ...path, key], msg: `${keyReason} in the key` }
    const found = findIssue(inner, [...path, key], depth + 1)
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * Nesting depth of JSON text without parsing it (brackets outside strings), so a deeply
 * nested body cannot exhaust the parser's stack.
 */
const textDepth = (text: string): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) deepest = Math.max(deepest, ++depth)
    else if (c === 125 || c === 93) depth--
  }
  return deepest
}

const invalid = (issue: ValidationIssue) =>
  errorResponse(
    ValidationFailed,
    new ValidationFailed({ error: `The request has an invalid field: ${issue.msg.toLowerCase()}.`, code: "VALIDATION_FAILED", detail: [issue] })
  )

const tooLarge = () =>
  errorResponse(
    BodyTooLarge,
    new BodyTooLarge({
      error: `JSON bodies are limited to ${maxJsonBodyBytes} bytes; send recordings as multipart or by direct upload.`,
      limit_bytes: maxJsonBodyBytes
    })
  )

const queryIssue = (request: HttpServerRequest.HttpServerRequest): ValidationIssue | undefined => {
  const at = request.url.indexOf("?")
  if (at < 0) return undefined
  // URLSearchParams takes any string (malformed escapes are kept as written); it does not throw.
  for (const [name, value] of new URLSearchParams(request.url.slice(at + 1))) {
    const reason = unstorable(value) ?? unstorable(name)
    if (reason !== undefined) return { loc: ["query", name], msg: reason }
  }
  return undefined
}

/** A refusal for this request, or None to let it through (its body, if read, stays cached for the route). */
export const guardRequest = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const badQuery = queryIssue(request)
    if (badQuery !== undefined) return Option.some(invalid(badQuery))
    const contentType = (request.headers["content-type"] ?? "").toLowerCase()
    const path = request.url.split("?")[0] ?? request.url
    if (request.method === "GET" || request.method === "HEAD" || streamedBody(path, contentType)) return Option.none()
    if (Number(request.headers["content-length"] ?? 0) > maxJsonBodyBytes) return Option.some(tooLarge())
    if (!isJson(contentType)) return Option.none()
    const text = yield* request.text.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxJsonBodyBytes)),
      Effect.map(Option.some),
      // The server reports a body past `MaxBodySize` as a parse error whose reason is `BodyTooLarge`;
      // any other unreadable body is left to the route (as an empty text, which is not JSON).
      Effect.catch((error) =>
        Effect.succeed(
          error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
            ? Option.none<string>()
            : Option.some("")
        )
      )
    )
    if (Option.isNone(text)) return Option.some(tooLarge())
    if (textDepth(text.value) > maxJsonDepth) {
      return Option.some(invalid({ loc: ["body"], msg: `Nested deeper than ${maxJsonDepth} levels` }))
    }
    // Text that is not JSON goes through: the route answers 400 MALFORMED_JSON.
    const parsed = yield* Effect.option(Effect.try(() => JSON.parse(text.value) as unknown))
    if (Option.isNone(parsed)) return Option.none()
    const issue = findIssue(parsed.value, [], 0)
    return issue === undefined ? Option.none() : Option.some(invalid(issue))
  })
