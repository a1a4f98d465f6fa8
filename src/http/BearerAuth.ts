/**
 * `Authorization: Bearer <key>` for the routes that take the key there (`/mcp` and the
 * OpenAI-compatible `/v1/audio/transcriptions`), with the same key lookup and per-account
 * rate budget as `X-API-Key` on the REST API. A key sent as `X-API-Key` to these routes is
 * refused with a sentence saying where it goes. Each adapter renders the refusal in its
 * own wire shape (401 + `WWW-Authenticate`, or an OpenAI error body).
 */
import { Clock, Effect, Option } from "effect"
import type { HttpServerRequest } from "effect/http"
import { ApiKeys } from "../../services/ApiKeys.ts"
import { LimitsConfig } from "../../services/config/LimitsConfig.ts"
import { effectivePlan } from "../../services/billing/Billing.ts"
import { RateLimiter } from "../../services/RateLimiter.ts"
import { InvalidApiKey, MissingApiKey, RateLimited } from "../contract/api/Errors.ts"
import type { AccountCaller } from "../contract/api/Security.ts"
import { plans } from "../contract/domain/Plan.ts"
import { RequestContext } from "./RequestContext.ts"

const bearer = /^bearer\s+(\S+)\s*$/i

/** Builds the check once (it holds the services); run it per request. */
export const makeBearerAuth = Effect.gen(function*() {
  const config = yield* LimitsConfig
  const keys = yield* ApiKeys
  const limiter = yield* RateLimiter
  const invalid = () => new InvalidApiKey({ error: "The API key is not valid: it is unknown, revoked or expired." })

  return Effect.fn("BearerAuth.authenticate")(function*(request: HttpServerRequest.HttpServerRequest) {
    const header = request.headers["authorization"]
    const token = header === undefined ? undefined : bearer.exec(header)?.[1]
    if (token === undefined) {
      return yield* new MissingApiKey({
        error: request.headers["x-api-key"] !== undefined
          ? "This endpoint takes the API key as Authorization: Bearer <key>, not in X-API-Key."
          : "This endpoint needs an API key as Authorization: Bearer <key>."
      })
    }
    const found = yield* keys.authenticate(token)
    if (Option.isNone(found)) return yield* invalid()
    const { account } = found.value
    const requestContext = yield* Effect.serviceOption(RequestContext)
    if (Option.isSome(requestContext)) requestContext.value.accountId = account.id
    const current = { ...account, plan: effectivePlan(account, yield* Clock.currentTimeMillis) }
    const perMinute = plans[current.plan].rateTier === "enterprise"
      ? config.enterpriseRateLimitPerMinute
      : config.rateLimitPerMinute
    const decision = yield* limiter.consume(`rate:acct:${current.id}`, perMinute)
    if (!decision.allowed) {
      return yield* new RateLimited({
        error: `Too many requests: the limit is ${perMinute} per minute. Retry after ${decision.retryAfterSeconds} s.`,
        code: "RATE_LIMITED",
        retry_after: decision.retryAfterSeconds
      })
    }
    return { _tag: "Account", account: current, keyId: found.value.keyId, sessionId: null } satisfies AccountCaller
  })
})
