/**
 * Who is calling. Keys go in `X-API-Key` (never `Authorization: Bearer`, which is kept
 * for user sign-in: a website session's `vbs_` access token). Two middlewares share one implementation:
 * - `RequireAccount` for endpoints that need a key bound to an account;
 * - `AllowGuest` for endpoints a keyless client may use (samples, `/v1/me`, and reads
 *   of a sample job that present its `X-Claim-Token`).
 * Both count the request against the caller's rate limit.
 */
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import type { Account } from "../domain/Account.ts"
import type { ApiKeyId } from "../domain/Ids.ts"
import { type Role, type SessionId, sessionCookie } from "../domain/People.ts"
import { InvalidApiKey, MissingApiKey, RateLimited } from "./Errors.ts"
import { CsrfFailed, InvalidSession, OwnerOnly, SignInRequired } from "./SessionErrors.ts"

export interface AccountCaller {
  readonly _tag: "Account"
  readonly account: Account
  /** The API key of the request; null when a signed-in user's session authenticated it. */
  readonly keyId: ApiKeyId | null
  /** The website session (`Authorization: Bearer vbs_…`); null for an API key. */
  readonly sessionId: SessionId | null
}

/** What an idempotency key or an upload ticket is scoped to: the API key, or the session. */
export const credentialScope = (caller: AccountCaller) =>
  caller.keyId !== null ? `key:${caller.keyId}` : `session:${caller.sessionId}`

export interface GuestCaller {
  readonly _tag: "Guest"
  /** The client's network address: the unit of the keyless sample allowance. */
  readonly clientId: string
  /** `X-Claim-Token` as sent, if any; checked against a job's stored hash on reads. */
  readonly claimToken: string | undefined
}

export type Caller = AccountCaller | GuestCaller

export class CurrentAccount extends Context.Service<CurrentAccount, AccountCaller>()("verbatim/api/CurrentAccount") {}
export class CurrentCaller extends Context.Service<CurrentCaller, Caller>()("verbatim/api/CurrentCaller") {}

export const apiKeyHeader = HttpApiSecurity.apiKey({ key: "X-API-Key", in: "header" })

/** A signed-in person on the website's own endpoints (`/web/...`), by the `vb_session` cookie. */
export interface WebCaller {
  readonly sessionId: SessionId
  readonly csrfToken: string
  readonly expiresAt: Date
  readonly account: Account
  readonly role: Role
}

export class CurrentWebCaller extends Context.Service<CurrentWebCaller, WebCaller>()("verbatim/api/CurrentWebCaller") {}

export const sessionCookieSecurity = HttpApiSecurity.apiKey({ key: sessionCookie, in: "cookie" })

/**
 * The website's endpoints: a live session cookie, and on POST/PATCH/PUT/DELETE an
 * `X-CSRF-Token` equal to the session's token (403 `CSRF_FAILED`).
 */
export class WebSignedIn extends HttpApiMiddleware.Service<WebSignedIn, {
  provides: CurrentWebCaller
}>()("verbatim/api/WebSignedIn", {
  security: { session: sessionCookieSecurity },
  error: [SignInRequired, InvalidSession, CsrfFailed]
}) {}

/** As `WebSignedIn`, for the owner only (403 `OWNER_ONLY`). */
export class WebOwner extends HttpApiMiddleware.Service<WebOwner, {
  provides: CurrentWebCaller
}>()("verbatim/api/WebOwner", {
  security: { session: sessionCookieSecurity },
  error: [SignInRequired, InvalidSession, CsrfFailed, OwnerOnly]
}) {}

export class RequireAccount extends HttpApiMiddleware.Service<RequireAccount, {
  provides: CurrentAccount
}>()("verbatim/api/RequireAccount", {
  security: { apiKey: apiKeyHeader },
  error: [MissingApiKey, InvalidApiKey, InvalidSession, RateLimited]
}) {}

export class AllowGuest extends HttpApiMiddleware.Service<AllowGuest, {
  provides: CurrentCaller
}>()("verbatim/api/AllowGuest", {
  security: { apiKey: apiKeyHeader },
  error: [MissingApiKey, InvalidApiKey, InvalidSession, RateLimited]
}) {}
