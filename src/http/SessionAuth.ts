/**
 * The website's session middlewares (`WebSignedIn`, `WebOwner`, src/contract/api/Security.ts)
 * and the rules they share with the request edge:
 * - the service's own origin: `VERBATIM_PUBLIC_URL`'s, or the one the Host header names (https
 *   when `VERBATIM_TRUST_PROXY` is set and the proxy says `X-Forwarded-Proto: https`);
 * - the session cookie: `vb_session=<token>; HttpOnly; SameSite=Lax; Path=/; Max-Age=30 days`,
 *   plus `Secure` whenever the page was reached over https (the same two signals);
 * - CSRF: a POST/PATCH/PUT/DELETE must carry `X-CSRF-Token` equal to the session's token
 *   (compared in constant time). A cross-site page can make the browser send the cookie
 *   (SameSite=Lax still allows top-level POST forms in old browsers) but cannot read the token.
 */
import { Clock, Duration, Effect, Layer, Option, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { timingSafeEqual } from "node:crypto"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { absoluteLifetime, Sessions, type SignedIn } from "../../services/people/Sessions.ts"
import { effectivePlan } from "../../services/billing/Billing.ts"
import {
  CurrentWebCaller,
  sessionCookieSecurity,
  type WebCaller,
  WebOwner,
  WebSignedIn
} from "../contract/api/Security.ts"
import { CsrfFailed, InvalidSession, OwnerOnly, SignInRequired } from "../contract/api/SessionErrors.ts"
import { sessionCookie } from "../contract/domain/People.ts"

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"])

const originOf = (url: string): string | undefined => URL.canParse(url) ? new URL(url).origin : undefined

/** The request came over https: the public URL says so, or a trusted proxy does. */
export const isSecureRequest = (config: ServerConfig["Service"], request: HttpServerRequest.HttpServerRequest) =>
  (Option.isSome(config.publicUrl) && config.publicUrl.value.toLowerCase().startsWith("https:")) ||
  (config.trustProxy && request.headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase() === "https")

/** The origins this service answers as: the public URL's, and the one the request's Host names. */
export const ownOrigins = (config: ServerConfig["Service"], request: HttpServerRequest.HttpServerRequest): ReadonlyArray<string> => {
  const origins: Array<string> = []
  if (Option.isSome(config.publicUrl)) {
    const origin = originOf(config.publicUrl.value)
    if (origin !== undefined) origins.push(origin)
  }
  const host = request.headers["host"]
  if (host !== undefined) {
    const forwardedHttps = config.trustProxy &&
      request.headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase() === "https"
    const origin = originOf(`${forwardedHttps ? "https" : "http"}://${host}`)
    if (origin !== undefined) origins.push(origin)
  }
  return origins
}

/** No `Origin` (not a browser's cross-origin call), or our own. */
export const isSameOriginOrNone = (config: ServerConfig["Service"], request: HttpServerRequest.HttpServerRequest) => {
  const origin = request.headers["origin"]
  return origin === undefined || ownOrigins(config, request).includes(origin)
}

/** Registers the session cookie on the response being built. */
export const setSessionCookie = (config: ServerConfig["Service"], request: HttpServerRequest.HttpServerRequest, token: string) =>
  HttpApiBuilder.securitySetCookie(sessionCookieSecurity, token, {
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    secure: isSecureRequest(config, request),
    maxAge: absoluteLifetime
  })

/** Clears the session cookie in the browser. */
export const clearSessionCookie = (config: ServerConfig["Service"], request: HttpServerRequest.HttpServerRequest) =>
  HttpApiBuilder.securitySetCookie(sessionCookieSecurity, "", {
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    secure: isSecureRequest(config, request),
    maxAge: Duration.zero
  })

/** The `vb_session` cookie of a request, if any. */
export const sessionCookieOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const value = request.cookies[sessionCookie]
  return value === undefined || value === "" ? undefined : value
}

export const webCallerOf = (signedIn: SignedIn, now: number): WebCaller => ({
  sessionId: signedIn.session.id,
  csrfToken: signedIn.session.csrf_token,
  expiresAt: signedIn.session.expires_at,
  account: { ...signedIn.account, plan: effectivePlan(signedIn.account, now) },
  role: signedIn.role
})

const sameToken = (sent: string | undefined, expected: string) => {
  if (sent === undefined) return false
  const a = Buffer.from(sent)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

const makeWebAuthenticate = Effect.gen(function*() {
  const sessions = yield* Sessions
  const config = yield* ServerConfig
  return Effect.fn("SessionAuth.authenticate")(function*(credential: Redacted.Redacted<string>) {
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = Redacted.value(credential)
    if (token === "") {
      return yield* new SignInRequired({ error: "Sign in first: this needs a website session." })
    }
    const found = yield* sessions.byCookie(token)
    if (Option.isNone(found)) {
      return yield* new InvalidSession({ error: "The session has ended (signed out or expired); sign in again." })
    }
    const caller = webCallerOf(found.value, yield* Clock.currentTimeMillis)
    if (!safeMethods.has(request.method.toUpperCase())) {
      if (!isSameOriginOrNone(config, request) || !sameToken(request.headers["x-csrf-token"], caller.csrfToken)) {
        return yield* new CsrfFailed({
          error: "This change needs the session's X-CSRF-Token header (from GET /web/session)."
        })
      }
    }
    return caller
  })
})

export const WebSignedInLive = Layer.effect(
  WebSignedIn,
  Effect.gen(function*() {
    const authenticate = yield* makeWebAuthenticate
    return WebSignedIn.of({
      session: (httpEffect, { credential }) =>
        Effect.flatMap(authenticate(credential), (caller) => Effect.provideService(httpEffect, CurrentWebCaller, caller))
    })
  })
)

export const WebOwnerLive = Layer.effect(
  WebOwner,
  Effect.gen(function*() {
    const authenticate = yield* makeWebAuthenticate
    return WebOwner.of({
      session: (httpEffect, { credential }) =>
        authenticate(credential).pipe(
          Effect.filterOrFail(
            (caller) => caller.role === "owner",
            () => new OwnerOnly({ error: "Only the installation's owner may do this." })
          ),
          Effect.flatMap((caller) => Effect.provideService(httpEffect, CurrentWebCaller, caller))
        )
    })
  })
)
