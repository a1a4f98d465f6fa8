/**
 * The request edge, wrapped around every route (and around "no route"):
 * - a request id on every response (`X-Request-Id`, echoed when the client sent a sane one);
 * - browsers refused: CORS preflights, any request whose `Origin` is not the service's own, and
 *   any `X-API-Key` sent by a browser (`Origin` or `Sec-Fetch-Site`) get 403 `BROWSER_FORBIDDEN`
 *   with no CORS allow headers — keys are for servers and scripts. The service's own pages
 *   (same origin, see `browserAllowed`) may call `/web/*` (the session cookie and CSRF token are
 *   checked there), `/v1/*` with a session's `Authorization: Bearer vbs_…`, and the pages;
 * - failures outside typed handler errors mapped to `{ error, code }` (see ErrorResponses);
 * - `Retry-After` on every 429 (and a 503 whose body has one) from the body's `retry_after`;
 * - one pino line per request.
 */
import { Cause, Effect, Option, type Types } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { AppLogger } from "../../services/observability/AppLogger.ts"
import { accessTokenPrefix } from "../contract/domain/People.ts"
import { BrowserForbidden } from "../contract/api/Errors.ts"
import { classifyFailure, errorResponse, normalizeErrorResponse } from "./ErrorResponses.ts"
import { RequestContext } from "./RequestContext.ts"
import { guardRequest } from "./RequestGuard.ts"
import { ownOrigins } from "./SessionAuth.ts"

/** nginx's "client closed request": the status logged for a request whose client hung up. */
const clientClosedStatus = 499

const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/

const sessionBearer = new RegExp(`^bearer\\s+${accessTokenPrefix}\\S+\\s*$`, "i")

/** Paths the service's own pages may reach from the browser, besides `/v1/*` by session. */
const pagePath = (path: string) =>
  path === "/" || path === "/web" || path.startsWith("/web/") || path.startsWith("/checkout/") || path === "/pricing"

/**
 * Whether a request is one the edge lets through from a browser. Not a browser (no `Origin`, no
 * `Sec-Fetch-Site`): always. A preflight: never (same-origin calls need none). Another origin:
 * never. An `X-API-Key` from a browser: never, even from our own pages. Our own origin (or a
 * same-origin fetch without `Origin`): the pages and `/web/*`, and `/v1/*` authenticated by a
 * session access token.
 */
export const browserAllowed = (config: ServerConfig["Service"], request: HttpServerRequest.HttpServerRequest): boolean => {
  const origin = request.headers["origin"]
  const fetchSite = request.headers["sec-fetch-site"]
  if (request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined) return false
  if (origin === undefined && fetchSite === undefined) return true
  if (request.headers["x-api-key"] !== undefined) return false
  // Without `Origin` a browser's request is a navigation or a plain GET (links, media elements,
  // forms of GET): it carries no key and reads nothing cross-origin, as before.
  if (origin === undefined) return true
  if (!ownOrigins(config, request).includes(origin)) return false
  const path = request.url.split("?")[0] ?? request.url
  if (pagePath(path)) return true
  return path.startsWith("/v1/") && sessionBearer.test(request.headers["authorization"] ?? "")
}

const retryAfterFromBody = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  if (response.body._tag !== "Uint8Array") return undefined
  const parsed: unknown = (() => {
    try {
      return JSON.parse(new TextDecoder().decode(response.body.body))
    } catch {
      return undefined
    }
  })()
  const seconds = typeof parsed === "object" && parsed !== null ? (parsed as { retry_after?: unknown }).retry_after : undefined
  return typeof seconds === "number" ? String(Math.max(1, Math.ceil(seconds))) : undefined
}

export const EdgeMiddleware = HttpRouter.middleware(
  Effect.gen(function*() {
    const logger = yield* AppLogger
    const config = yield* ServerConfig
    // Every failure is turned into a response here; the declared `unhandled` error only
    // satisfies the router's bookkeeping for global middleware.
    return (httpEffect): Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest> =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const started = performance.now()
        const incoming = request.headers["x-request-id"]
        const context = RequestContext.of({
          requestId: incoming !== undefined && saneRequestId.test(incoming) ? incoming : crypto.randomUUID(),
          accountId: null
        })
        const refused = !browserAllowed(config, request)
          ? Option.some(errorResponse(
            BrowserForbidden,
            new BrowserForbidden({ error: "This API is for servers and scripts; browsers may not call it directly." })
          ))
          : yield* guardRequest(request)
        let response: HttpServerResponse.HttpServerResponse = Option.isSome(refused)
          ? refused.value
          : yield* httpEffect.pipe(
            Effect.provideService(RequestContext, context),
            Effect.catchCause((cause) => {
              // The client went away mid-request (closed or reset its connection): nobody reads
              // an answer, and it is not our failure. Logged as 499 in the request line only,
              // so a client cannot flood the error log by hanging up.
              if (Cause.hasInterruptsOnly(cause)) return Effect.succeed(HttpServerResponse.empty({ status: clientClosedStatus }))
              const classified = classifyFailure(cause)
              return classified._tag === "Defect"
                ? Effect.as(Effect.logError("unhandled failure", cause), classified.response)
                : Effect.succeed(classified.response)
            })
          )
        response = normalizeErrorResponse(response)
        if ((response.status === 429 || response.status === 503) && response.headers["retry-after"] === undefined) {
          const retryAfter = retryAfterFromBody(response)
          if (retryAfter !== undefined) response = HttpServerResponse.setHeader(response, "retry-after", retryAfter)
        }
        response = HttpServerResponse.setHeader(response, "x-request-id", context.requestId)
        logger.request({
          request_id: context.requestId,
          method: request.method,
          path: request.url.split("?")[0] ?? request.url,
          status: response.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
          account_id: context.accountId
        })
        return response
      })
  }),
  { global: true }
)
