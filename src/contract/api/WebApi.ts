/**
 * The website's own endpoints (`/web/...`, issue 23). Internal per the spec's versioning rule
 * 4 (paths outside the specification may change), documented under "Website (internal)" so
 * the typed client the web app uses has them.
 *
 * Sign-up and sign-in take no session (they make one) and answer `Set-Cookie: vb_session=…;
 * HttpOnly; SameSite=Lax; Path=/` (+ `Secure` behind https). Everything else needs the cookie,
 * and every POST also the session's `X-CSRF-Token` (src/http/SessionAuth.ts).
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { AccountId } from "../domain/Ids.ts"
import {
  AdminAccount,
  AdminAccountList,
  CheckoutConfirmed,
  CreditsGranted,
  CreditsRequest,
  Invite,
  InviteRequest,
  KeyList,
  NewAccountRequest,
  NewKey,
  NewKeyRequest,
  PlanRequest,
  RotatedKey,
  SignInRequest,
  SignUpRequest,
  WebSession
} from "../domain/People.ts"
import { jsonBodyErrors, NotFound, PaymentRequired, pathIdErrors, RateLimited } from "./Errors.ts"
import { WebOwner, WebSignedIn } from "./Security.ts"
import {
  AccountExists,
  BadCredentials,
  CheckoutExpiredError,
  CsrfFailed,
  KeyLimit,
  SignUpRefused
} from "./SessionErrors.ts"

const tag = OpenApi.annotations({ title: "Website (internal)" })

const setCookie = {
  "Set-Cookie": { description: "`vb_session=…; HttpOnly; SameSite=Lax; Path=/` (+ `Secure` behind https)." }
}

/** Response headers on an operation, in the document (the server sets them in the handler). */
const withHeaders = (status: number, headers: Record<string, { readonly description: string }>) =>
  OpenApi.annotations({
    transform: (operation) => {
      const response = operation["responses"]?.[String(status)]
      if (response !== undefined) {
        response["headers"] = {
          ...response["headers"],
          ...Object.fromEntries(Object.entries(headers).map(([name, doc]) => [name, { ...doc, schema: { type: "string" } }]))
        }
      }
      return operation
    }
  })

export class WebAuthApi extends HttpApiGroup.make("webAuth")
  .add(
    HttpApiEndpoint.post("signUp", "/web/signup", {
      payload: SignUpRequest,
      success: WebSession,
      error: [SignUpRefused, AccountExists, CsrfFailed, ...jsonBodyErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "Sign up",
      description: "The first sign-up on an installation becomes its owner; later ones need the owner's invite " +
        "(403 `INVITE_REQUIRED` / `INVITE_INVALID`). A browser must send it from the service's own origin."
    })).annotateMerge(withHeaders(200, setCookie)),
    HttpApiEndpoint.post("signIn", "/web/signin", {
      payload: SignInRequest,
      success: WebSession,
      error: [BadCredentials, RateLimited, CsrfFailed, ...jsonBodyErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "Sign in",
      description: "Wrong email or password: 401 `BAD_CREDENTIALS` (one sentence for both). Five failures in " +
        "15 minutes from one address or for one email: 429 until the window ends."
    })).annotateMerge(withHeaders(200, setCookie)),
    HttpApiEndpoint.get("session", "/web/session", { success: WebSession }).annotateMerge(OpenApi.annotations({
      summary: "The current session",
      description: "`signed_in: false` (and nulls) without a live `vb_session` cookie."
    }))
  )
  .annotateMerge(tag)
{}

const keyParams = { id: Schema.String.check(Schema.isMaxLength(64)) }

export class WebAccountApi extends HttpApiGroup.make("webAccount")
  .add(
    HttpApiEndpoint.post("signOut", "/web/signout", { success: HttpApiSchema.NoContent })
      .annotateMerge(OpenApi.annotations({ summary: "Sign out (this session)" }))
      .annotateMerge(withHeaders(204, { "Set-Cookie": { description: "Clears `vb_session`." } })),
    HttpApiEndpoint.post("signOutAll", "/web/signout-all", { success: HttpApiSchema.NoContent })
      .annotateMerge(OpenApi.annotations({ summary: "Sign out everywhere (every session of the account)" }))
      .annotateMerge(withHeaders(204, { "Set-Cookie": { description: "Clears `vb_session`." } })),
    HttpApiEndpoint.get("keys", "/web/keys", { success: KeyList })
      .annotateMerge(OpenApi.annotations({ summary: "The account's API keys (never their secrets)" })),
    HttpApiEndpoint.post("createKey", "/web/keys", {
      payload: NewKeyRequest,
      success: NewKey,
      error: [PaymentRequired, KeyLimit, ...jsonBodyErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "Create an API key (shown once)",
      description: "10 active keys at most (409 `KEY_LIMIT`); needs API access (402 `API_ACCESS_REQUIRED` with " +
        "`upgrade_url` and a `checkout_url` for the pack that includes it)."
    })),
    HttpApiEndpoint.post("rotateKey", "/web/keys/:id/rotate", {
      params: keyParams,
      success: RotatedKey,
      error: [NotFound, KeyLimit]
    }).annotateMerge(OpenApi.annotations({ summary: "Rotate a key: a new one now, the old one for 24 more hours" })),
    HttpApiEndpoint.post("revokeKey", "/web/keys/:id/revoke", {
      params: keyParams,
      success: HttpApiSchema.NoContent,
      error: [NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "Revoke a key (stops at once)" }))
  )
  .middleware(WebSignedIn)
  .annotateMerge(tag)
{}

const accountParams = { id: AccountId }

export class WebAdminApi extends HttpApiGroup.make("webAdmin")
  .add(
    HttpApiEndpoint.get("accounts", "/web/admin/accounts", { success: AdminAccountList })
      .annotateMerge(OpenApi.annotations({ summary: "Every account (owner only)" })),
    HttpApiEndpoint.post("createAccount", "/web/admin/accounts", {
      payload: NewAccountRequest,
      success: AdminAccount,
      error: [AccountExists, ...jsonBodyErrors]
    }).annotateMerge(OpenApi.annotations({ summary: "Create an account (as `verbatim admin account create`)" })),
    HttpApiEndpoint.post("setPlan", "/web/admin/accounts/:id/plan", {
      params: accountParams,
      payload: PlanRequest,
      success: AdminAccount,
      error: [NotFound, ...pathIdErrors, ...jsonBodyErrors]
    }).annotateMerge(OpenApi.annotations({ summary: "Set an account's plan" })),
    HttpApiEndpoint.post("grantAccess", "/web/admin/accounts/:id/access", {
      params: accountParams,
      success: AdminAccount,
      error: [NotFound, ...pathIdErrors]
    }).annotateMerge(OpenApi.annotations({ summary: "Grant API access" })),
    HttpApiEndpoint.post("grantCredits", "/web/admin/accounts/:id/credits", {
      params: accountParams,
      payload: CreditsRequest,
      success: CreditsGranted,
      error: [NotFound, ...pathIdErrors, ...jsonBodyErrors]
    }).annotateMerge(OpenApi.annotations({ summary: "Grant minutes (pays for locked transcripts first)" })),
    HttpApiEndpoint.post("confirmCheckout", "/web/admin/checkouts/:id/confirm", {
      params: { id: Schema.String.check(Schema.isMaxLength(100)) },
      success: CheckoutConfirmed,
      error: [NotFound, CheckoutExpiredError]
    }).annotateMerge(OpenApi.annotations({ summary: "Confirm a payment for a pay link (built-in provider; credits once)" })),
    HttpApiEndpoint.post("invite", "/web/admin/invites", {
      payload: InviteRequest,
      success: Invite,
      error: [AccountExists, ...jsonBodyErrors]
    }).annotateMerge(OpenApi.annotations({ summary: "Invite someone to sign up (link valid 7 days, one use)" }))
  )
  .middleware(WebOwner)
  .annotateMerge(tag)
{}
