/**
 * Implementation of the `RequireAccount` and `AllowGuest` middlewares (src/contract/api/Security.ts):
 * key lookup, a signed-in user's session (`Authorization: Bearer vbs_…`: the account of the
 * session, with the same plan, rate budget, balance and library as its keys), the Bearer hint
 * for anything else sent as Bearer, guest identity, and the per-account (or per-address)
 * request rate, all before any handler runs.
 */
import { Clock, Effect, Layer, Option, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import type { HttpApiEndpoint } from "effect/http-api"
import { ApiKeys } from "../../services/ApiKeys.ts"
import { LimitsConfig } from "../../services/config/LimitsConfig.ts"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { effectivePlan } from "../../services/billing/Billing.ts"
import { RateLimiter } from "../../services/RateLimiter.ts"
import { Sessions } from "../../services/people/Sessions.ts"
import { plans } from "../contract/domain/Plan.ts"
import { accessTokenPrefix } from "../contract/domain/People.ts"
import { InvalidApiKey, MissingApiKey, RateLimited } from "../contract/api/Errors.ts"
import { InvalidSession } from "../contract/api/SessionErrors.ts"
import {
  AllowGuest,
  type Caller,
  CurrentAccount,
  CurrentCaller,
  RequireAccount
} from "../contract/api/Security.ts"
import { RequestContext } from "./RequestContext.ts"

/** Endpoints with a rate budget of their own (the batch status call: 600/min). */
export const batchStatusEndpoint = "batchStatus"

export const clientAddress = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean): string => {
  if (trustProxy) {
    const forwarded = request.headers["x-forwarded-for"]?.split(",")[0]?.trim()
    if (forwarded) return forwarded
  }
  return Option.getOrElse(request.remoteAddress, () => "unknown")
}

const bearerToken = /^bearer\s+(\S+)\s*$/i

const makeAuthenticate = Effect.gen(function*() {
  const config = { ...(yield* LimitsConfig), ...(yield* ServerConfig) }
  const keys = yield* ApiKeys
  const limiter = yield* RateLimiter
  const sessions = yield* Sessions

  const limit = Effect.fnUntraced(function*(bucket: string, perMinute: number) {
    const decision = yield* limiter.consume(bucket, perMinute)
    if (!decision.allowed) {
      return yield* new RateLimited({
        error: `Too many requests: the limit is ${perMinute} per minute. Retry after ${decision.retryAfterSeconds} s.`,
        code: "RATE_LIMITED",
        retry_after: decision.retryAfterSeconds
      })
    }
  })

  const perMinuteOf = (plan: keyof typeof plans, batch: boolean) =>
    batch
      ? config.batchStatusPerMinute
      : plans[plan].rateTier === "enterprise"
      ? config.enterpriseRateLimitPerMinute
      : config.rateLimitPerMinute

  return Effect.fn("Auth.authenticate")(function*(
    credential: Redacted.Redacted<string>,
    endpoint: HttpApiEndpoint.Top,
    requireAccount: boolean
  ) {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestContext = yield* Effect.serviceOption(RequestContext)
    const key = Redacted.value(credential).trim()
    // `identifier`, not `name`: an endpoint is a class, whose `name` is the constructor's.
    const batch = endpoint.identifier === batchStatusEndpoint

    if (key === "") {
      const authorization = request.headers["authorization"] ?? ""
      const token = bearerToken.exec(authorization)?.[1]
      if (token !== undefined && token.startsWith(accessTokenPrefix)) {
        const found = yield* sessions.byAccessToken(token)
        if (Option.isNone(found)) {
          return yield* new InvalidSession({
            error: "The session token is not valid: it is unknown, signed out or expired. Sign in again."
          })
        }
        const { account, session } = found.value
        if (Option.isSome(requestContext)) requestContext.value.accountId = account.id
        const current = { ...account, plan: effectivePlan(account, yield* Clock.currentTimeMillis) }
        yield* limit(`${batch ? "batch" : "rate"}:acct:${account.id}`, perMinuteOf(current.plan, batch))
        return { _tag: "Account", account: current, keyId: null, sessionId: session.id } satisfies Caller
      }
      if (/^bearer\s/i.test(authorization)) {
        return yield* new MissingApiKey({
          error: "API keys go in the X-API-Key header; Authorization: Bearer is reserved for user sign-in."
        })
      }
      if (requireAccount) {
        return yield* new MissingApiKey({ error: "This endpoint needs an API key in the X-API-Key header." })
      }
      const clientId = clientAddress(request, config.trustProxy)
      yield* limit(`${batch ? "batch" : "rate"}:ip:${clientId}`, batch ? config.batchStatusPerMinute : config.rateLimitPerMinute)
      return { _tag: "Guest", clientId, claimToken: request.headers["x-claim-token"] } satisfies Caller
    }

    const found = yield* keys.authenticate(key)
    if (Option.isNone(found)) {
      return yield* new InvalidApiKey({ error: "The API key is not valid: it is unknown, revoked or expired." })
    }
    // The key's account comes with it (one query).
    const { account } = found.value
    if (Option.isSome(requestContext)) requestContext.value.accountId = account.id
    // Downstream sees the plan in force now (a lapsed Workspace period reads as standard).
    const current = { ...account, plan: effectivePlan(account, yield* Clock.currentTimeMillis) }
    yield* limit(`${batch ? "batch" : "rate"}:acct:${account.id}`, perMinuteOf(current.plan, batch))
    return { _tag: "Account", account: current, keyId: found.value.keyId, sessionId: null } satisfies Caller
  })
})

export const RequireAccountLive = Layer.effect(
  RequireAccount,
  Effect.gen(function*() {
    const authenticate = yield* makeAuthenticate
    return RequireAccount.of({
      apiKey: (httpEffect, { credential, endpoint }) =>
        Effect.flatMap(authenticate(credential, endpoint, true), (caller) =>
          caller._tag === "Account"
            ? Effect.provideService(httpEffect, CurrentAccount, caller)
            : Effect.die("unreachable: an account was required"))
    })
  })
)

export const AllowGuestLive = Layer.effect(
  AllowGuest,
  Effect.gen(function*() {
    const authenticate = yield* makeAuthenticate
    return AllowGuest.of({
      apiKey: (httpEffect, { credential, endpoint }) =>
        Effect.flatMap(
          authenticate(credential, endpoint, false),
          (caller) => Effect.provideService(httpEffect, CurrentCaller, caller)
        )
    })
  })
)
