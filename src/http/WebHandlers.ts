/**
 * The website's own endpoints (src/contract/api/WebApi.ts): sign-up, sign-in, the session,
 * sign-out, the key panel and the owner's Admin page. Each decodes, calls one use case (the
 * services the admin CLI calls, for the Admin page) and encodes; the session cookie is set or
 * cleared here (flags in SessionAuth.ts).
 */
import { Clock, Effect, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Accounts } from "../../services/Accounts.ts"
import { ApiKeys, keyStatus, maxActiveKeys } from "../../services/ApiKeys.ts"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { Billing } from "../../services/billing/Billing.ts"
import { checkoutConfirmation, Checkouts } from "../../services/billing/Checkouts.ts"
import { Paywall } from "../../services/billing/Paywall.ts"
import { Invites } from "../../services/people/Invites.ts"
import { type Member, Members } from "../../services/people/Members.ts"
import { accessTokenFor, Sessions, type SignedIn } from "../../services/people/Sessions.ts"
import { SignIn } from "../../services/people/SignIn.ts"
import { SignUp } from "../../services/people/SignUp.ts"
import { Api } from "../contract/api/Api.ts"
import { NotFound, PaymentRequired, ValidationFailed } from "../contract/api/Errors.ts"
import { CurrentWebCaller } from "../contract/api/Security.ts"
import { AccountExists, CheckoutExpiredError, CsrfFailed, KeyLimit } from "../contract/api/SessionErrors.ts"
import type { ApiKeyRecord } from "../contract/domain/ApiKey.ts"
import type { AccountId } from "../contract/domain/Ids.ts"
import type { AdminAccount, KeyView, WebSession } from "../contract/domain/People.ts"
import { clientAddress } from "./Auth.ts"
import { publicBaseUrl } from "./PublicUrl.ts"
import {
  clearSessionCookie,
  isSameOriginOrNone,
  sessionCookieOf,
  setSessionCookie,
  webCallerOf
} from "./SessionAuth.ts"

const signedOut: WebSession = { signed_in: false, account: null, csrf_token: null, access_token: null, expires_at: null }

const sessionView = (token: string, signedIn: SignedIn, now: number): WebSession => {
  const caller = webCallerOf(signedIn, now)
  return {
    signed_in: true,
    account: { account_id: caller.account.id, email: caller.account.email, role: caller.role, plan: caller.account.plan },
    csrf_token: caller.csrfToken,
    access_token: accessTokenFor(token),
    expires_at: caller.expiresAt.toISOString()
  }
}

const keyView = (key: ApiKeyRecord, now: number): KeyView => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  created_at: key.created_at.toISOString(),
  last_used_at: key.last_used_at?.toISOString() ?? null,
  status: keyStatus(key, now),
  expires_at: key.expires_at?.toISOString() ?? null
})

const adminView = (member: Member): AdminAccount => ({
  account_id: member.account.id,
  email: member.account.email,
  role: member.role,
  plan: member.account.plan,
  plan_expires_at: member.account.plan_expires_at?.toISOString() ?? null,
  api_access: member.account.api_access,
  signed_up: member.signed_up,
  balance_minutes: Math.round(member.balance_minutes * 100) / 100,
  created_at: member.account.created_at.toISOString()
})

/** Sign-up and sign-in have no session to carry a CSRF token, so a browser must at least send them from here. */
const requireOwnOrigin = Effect.gen(function*() {
  const config = yield* ServerConfig
  const request = yield* HttpServerRequest.HttpServerRequest
  if (!isSameOriginOrNone(config, request)) {
    return yield* new CsrfFailed({ error: "Sign-up and sign-in are only accepted from this service's own pages." })
  }
})

export const WebAuthHandlers = HttpApiBuilder.group(
  Api,
  "webAuth",
  Effect.fn(function*(handlers) {
    const config = yield* ServerConfig
    const signUp = yield* SignUp
    const signIn = yield* SignIn
    const sessions = yield* Sessions

    /** The new session as `GET /web/session` would show it, with its cookie set. */
    const opened = (request: HttpServerRequest.HttpServerRequest, token: string) =>
      Effect.gen(function*() {
        const found = yield* sessions.byCookie(token)
        if (Option.isNone(found)) return yield* Effect.die("a session just created is not found")
        yield* setSessionCookie(config, request, token)
        return sessionView(token, found.value, yield* Clock.currentTimeMillis)
      })

    return handlers
      .handle("signUp", ({ payload, request }) =>
        Effect.gen(function*() {
          yield* requireOwnOrigin
          const done = yield* signUp.signUp(payload)
          return yield* opened(request, done.issued.token)
        }))
      .handle("signIn", ({ payload, request }) =>
        Effect.gen(function*() {
          yield* requireOwnOrigin
          const done = yield* signIn.signIn({
            email: payload.email,
            password: payload.password,
            clientAddress: clientAddress(request, config.trustProxy)
          })
          return yield* opened(request, done.issued.token)
        }))
      .handle("session", ({ request }) =>
        Effect.gen(function*() {
          const token = sessionCookieOf(request)
          if (token === undefined) return signedOut
          const found = yield* sessions.byCookie(token)
          if (Option.isNone(found)) return signedOut
          return sessionView(token, found.value, yield* Clock.currentTimeMillis)
        }))
  })
)

export const WebAccountHandlers = HttpApiBuilder.group(
  Api,
  "webAccount",
  Effect.fn(function*(handlers) {
    const config = yield* ServerConfig
    const sessions = yield* Sessions
    const keys = yield* ApiKeys
    const paywall = yield* Paywall

    const keyLimit = () =>
      new KeyLimit({
        error: `The account already has ${maxActiveKeys} active keys; revoke one first.`,
        limit: maxActiveKeys
      })
    const noKey = () => new NotFound({ error: "The account has no usable key with this id." })

    return handlers
      .handle("signOut", ({ request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentWebCaller
          yield* sessions.signOut(caller.sessionId)
          yield* clearSessionCookie(config, request)
        }))
      .handle("signOutAll", ({ request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentWebCaller
          yield* sessions.signOutEverywhere(caller.account.id)
          yield* clearSessionCookie(config, request)
        }))
      .handle("keys", () =>
        Effect.gen(function*() {
          const caller = yield* CurrentWebCaller
          const now = yield* Clock.currentTimeMillis
          const list = yield* keys.list(caller.account.id)
          return { keys: list.map((key) => keyView(key, now)), limit: maxActiveKeys }
        }))
      .handle("createKey", ({ payload, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentWebCaller
          const issued = yield* keys.create(caller.account.id, payload.name).pipe(
            Effect.catchTags({
              TooManyKeys: () => Effect.fail(keyLimit()),
              ApiAccessRequired: (refused) =>
                Effect.gen(function*() {
                  const base = publicBaseUrl(config, request)
                  return yield* new PaymentRequired({
                    error: refused.message,
                    code: "API_ACCESS_REQUIRED",
                    upgrade_url: paywall.pricingUrl(base),
                    checkout_url: yield* paywall.checkoutUrlFor(caller.account.id, "team-monthly", base)
                  })
                })
            })
          )
          return { ...keyView(issued.record, yield* Clock.currentTimeMillis), key: issued.key }
        }))
      .handle("rotateKey", ({ params }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentWebCaller
          const issued = yield* keys.rotate(caller.account.id, params.id).pipe(
            Effect.catchTags({ TooManyKeys: () => Effect.fail(keyLimit()), KeyNotFound: () => Effect.fail(noKey()) })
          )
          const now = yield* Clock.currentTimeMillis
          const old = (yield* keys.list(caller.account.id)).find((key) => key.id === params.id || key.prefix === params.id)
          return {
            ...keyView(issued.record, now),
            key: issued.key,
            replaced_key_id: old?.id ?? params.id,
            replaced_key_expires_at: (old?.expires_at ?? new Date(now)).toISOString()
          }
        }))
      .handle("revokeKey", ({ params }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentWebCaller
          yield* keys.revoke(caller.account.id, params.id).pipe(Effect.catchTag("KeyNotFound", () => Effect.fail(noKey())))
        }))
  })
)

export const WebAdminHandlers = HttpApiBuilder.group(
  Api,
  "webAdmin",
  Effect.fn(function*(handlers) {
    const config = yield* ServerConfig
    const accounts = yield* Accounts
    const members = yield* Members
    const billing = yield* Billing
    const checkouts = yield* Checkouts
    const invites = yield* Invites

    const noAccount = () => new NotFound({ error: "No account has this id." })
    const view = (id: AccountId) =>
      Effect.flatMap(members.get(id), Option.match({ onNone: () => Effect.fail(noAccount()), onSome: (m) => Effect.succeed(adminView(m)) }))

    return handlers
      .handle("accounts", () => Effect.map(members.list(), (list) => ({ accounts: list.map(adminView) })))
      .handle("createAccount", ({ payload }) =>
        Effect.gen(function*() {
          const created = yield* accounts.create(payload.email).pipe(
            Effect.catchTags({
              AccountExists: (exists) => Effect.fail(new AccountExists({ error: exists.message })),
              InvalidEmail: (invalid) =>
                Effect.fail(
                  new ValidationFailed({
                    error: invalid.message,
                    code: "VALIDATION_FAILED",
                    detail: [{ loc: ["body", "email"], msg: "Not an email address" }]
                  })
                )
            })
          )
          if (payload.api_access === true) yield* accounts.grantApiAccess(created.id).pipe(Effect.orDie)
          return yield* view(created.id).pipe(Effect.orDie)
        }))
      .handle("setPlan", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* accounts.setPlan(params.id, payload.plan).pipe(Effect.catchTag("AccountNotFound", () => Effect.fail(noAccount())))
          return yield* view(params.id)
        }))
      .handle("grantAccess", ({ params }) =>
        Effect.gen(function*() {
          yield* accounts.grantApiAccess(params.id).pipe(Effect.catchTag("AccountNotFound", () => Effect.fail(noAccount())))
          return yield* view(params.id)
        }))
      .handle("grantCredits", ({ params, payload }) =>
        Effect.gen(function*() {
          if (Option.isNone(yield* accounts.findById(params.id))) return yield* noAccount()
          const granted = yield* billing.grant(params.id, payload.minutes, payload.note ?? "granted by the owner (website)").pipe(
            Effect.catchTag("InvalidAmount", (invalid) =>
              Effect.fail(
                new ValidationFailed({
                  error: invalid.message,
                  code: "VALIDATION_FAILED",
                  detail: [{ loc: ["body", "minutes"], msg: "Must be a positive number" }]
                })
              ))
          )
          return {
            account_id: params.id,
            balance_minutes: Math.round(granted.balanceMinutes * 100) / 100,
            unlocked_jobs: granted.unlocked
          }
        }))
      .handle("confirmCheckout", ({ params }) =>
        Effect.gen(function*() {
          const paid = yield* checkouts.pay(params.id, "builtin:owner").pipe(
            Effect.catchTags({
              CheckoutNotFound: () => Effect.fail(new NotFound({ error: "No pay link has this id." })),
              CheckoutExpired: (expired) => Effect.fail(new CheckoutExpiredError({ error: expired.message }))
            })
          )
          return checkoutConfirmation(paid)
        }))
      .handle("invite", ({ payload, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentWebCaller
          const issued = yield* invites.create(caller.account.id, payload.email)
          return {
            email: issued.email,
            invite_url: `${publicBaseUrl(config, request)}/#/signup?invite=${encodeURIComponent(issued.token)}`,
            expires_at: issued.expiresAt.toISOString()
          }
        }))
  })
)
