/**
 * Who is calling. Keys go in `X-API-Key` (never `Authorization: Bearer`, which is kept
 * for user sign-in). Two middlewares share one implementation:
 * - `RequireAccount` for endpoints that need a key bound to an account;
 * - `AllowGuest` for endpoints a keyless client may use (samples, `/v1/me`, and reads
 *   of a sample job that present its `X-Claim-Token`).
 * Both count the request against the caller's rate limit.
 */
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import type { Account } from "../domain/Account.ts"
import type { ApiKeyId } from "../domain/Ids.ts"
import { InvalidApiKey, MissingApiKey, RateLimited } from "./Errors.ts"

export interface AccountCaller {
  readonly _tag: "Account"
  readonly account: Account
  readonly keyId: ApiKeyId
}

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

export class RequireAccount extends HttpApiMiddleware.Service<RequireAccount, {
  provides: CurrentAccount
}>()("verbatim/api/RequireAccount", {
  security: { apiKey: apiKeyHeader },
  error: [MissingApiKey, InvalidApiKey, RateLimited]
}) {}

export class AllowGuest extends HttpApiMiddleware.Service<AllowGuest, {
  provides: CurrentCaller
}>()("verbatim/api/AllowGuest", {
  security: { apiKey: apiKeyHeader },
  error: [MissingApiKey, InvalidApiKey, RateLimited]
}) {}
