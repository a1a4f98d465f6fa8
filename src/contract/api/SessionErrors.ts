/**
 * Errors of the website's sign-in and sessions (issue 23), on the same wire rules as
 * Errors.ts: `{ error, code }` plus documented fields, the status on the class, no `_tag` on
 * the wire.
 */
import { Effect, Schema } from "effect"

const code = <C extends string>(value: C) =>
  Schema.Literal(value).pipe(Schema.withConstructorDefault(Effect.succeed(value)))

const wire = <Tag extends string>(tag: Tag) => ({
  _tag: Schema.tagDefaultOmit(tag),
  error: Schema.String.annotate({ description: "One readable sentence for people." })
})

/** Wrong email or wrong password: one sentence for both, so the answer does not say which. */
export class BadCredentials extends Schema.Error<BadCredentials>("BadCredentials")({
  ...wire("BadCredentials"),
  code: code("BAD_CREDENTIALS")
}, { httpApiStatus: 401 }) {}

/** A state change under `/web/` without the session's `X-CSRF-Token`, or a sign-in/up from another origin. */
export class CsrfFailed extends Schema.Error<CsrfFailed>("CsrfFailed")({
  ...wire("CsrfFailed"),
  code: code("CSRF_FAILED")
}, { httpApiStatus: 403 }) {}

/** An Admin endpoint called by a member. */
export class OwnerOnly extends Schema.Error<OwnerOnly>("OwnerOnly")({
  ...wire("OwnerOnly"),
  code: code("OWNER_ONLY")
}, { httpApiStatus: 403 }) {}

/** A website endpoint called without a session cookie. */
export class SignInRequired extends Schema.Error<SignInRequired>("SignInRequired")({
  ...wire("SignInRequired"),
  code: code("SIGN_IN_REQUIRED")
}, { httpApiStatus: 401 }) {}

/** Something only a signed-in user may do (chat), asked with an API key. */
export class SignedInUserOnly extends Schema.Error<SignedInUserOnly>("SignedInUserOnly")({
  ...wire("SignedInUserOnly"),
  code: code("SIGN_IN_REQUIRED")
}, { httpApiStatus: 403 }) {}

/** The session cookie or `vbs_` access token is unknown, signed out or expired. */
export class InvalidSession extends Schema.Error<InvalidSession>("InvalidSession")({
  ...wire("InvalidSession"),
  code: code("INVALID_SESSION")
}, { httpApiStatus: 401 }) {}

/** Sign-up refused: an owner exists and no invite was given, or the invite is unknown, used, expired or for another email. */
export class SignUpRefused extends Schema.Error<SignUpRefused>("SignUpRefused")({
  ...wire("SignUpRefused"),
  code: Schema.Literals(["INVITE_REQUIRED", "INVITE_INVALID"])
}, { httpApiStatus: 403 }) {}

/** The email already belongs to an account (that can sign in, for sign-up and invites). */
export class AccountExists extends Schema.Error<AccountExists>("AccountExistsError")({
  ...wire("AccountExistsError"),
  code: code("ACCOUNT_EXISTS")
}, { httpApiStatus: 409 }) {}

/** The account already holds its 10 active keys. */
export class KeyLimit extends Schema.Error<KeyLimit>("KeyLimit")({
  ...wire("KeyLimit"),
  code: code("KEY_LIMIT"),
  limit: Schema.Int
}, { httpApiStatus: 409 }) {}

/** A pay link that expired unpaid cannot be confirmed. */
export class CheckoutExpiredError extends Schema.Error<CheckoutExpiredError>("CheckoutExpiredError")({
  ...wire("CheckoutExpiredError"),
  code: code("CHECKOUT_EXPIRED")
}, { httpApiStatus: 409 }) {}
