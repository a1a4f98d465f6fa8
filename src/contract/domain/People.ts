/**
 * People on the website (issue 23): roles, sessions, and the shapes of the website's own
 * endpoints (`/web/...`, src/contract/api/WebApi.ts). Times on the wire are ISO strings.
 */
import { Schema } from "effect"
import { PlanId } from "./Plan.ts"

/** `owner`: the installation's first sign-up (Admin page, unmetered); everyone else `member`. */
export const Role = Schema.Literals(["owner", "member"])
export type Role = typeof Role.Type

/** A session's id: the SHA-256 (hex) of its cookie token; the token itself is never stored. */
export const SessionId = Schema.String.pipe(Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type

/** The prefix of a session's access token (`Authorization: Bearer vbs_…` on `/v1/*`). */
export const accessTokenPrefix = "vbs_"

/** The session cookie's name. */
export const sessionCookie = "vb_session"

export const Email = Schema.String.check(Schema.isMaxLength(320)).annotate({ description: "An email address." })

export const Password = Schema.String.check(Schema.isMinLength(10), Schema.isMaxLength(256)).annotate({
  description: "10 to 256 characters."
})

export const SignUpRequest = Schema.Struct({
  email: Email,
  password: Password,
  invite: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(200)).annotate({
    description: "The token of the owner's invite (`#/signup?invite=…`); not needed for the first sign-up."
  }))
})

export const SignInRequest = Schema.Struct({ email: Email, password: Password })

export const WebAccount = Schema.Struct({
  account_id: Schema.String,
  email: Schema.String,
  role: Role,
  plan: PlanId
})
export type WebAccount = typeof WebAccount.Type

export const WebSession = Schema.Struct({
  signed_in: Schema.Boolean,
  account: Schema.NullOr(WebAccount),
  csrf_token: Schema.NullOr(Schema.String).annotate({
    description: "Send as `X-CSRF-Token` on every POST/PATCH/PUT/DELETE under `/web/`."
  }),
  access_token: Schema.NullOr(Schema.String).annotate({
    description: "`vbs_…`: send as `Authorization: Bearer` on `/v1/*`; it ends with the session."
  }),
  expires_at: Schema.NullOr(Schema.String).annotate({ description: "When the session ends unless used (14 days sliding, 30 at most)." })
})
export type WebSession = typeof WebSession.Type

export const KeyStatus = Schema.Literals(["active", "rotating", "expired", "revoked"])

export const KeyView = Schema.Struct({
  id: Schema.String,
  name: Schema.NullOr(Schema.String),
  prefix: Schema.String,
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String),
  status: KeyStatus,
  expires_at: Schema.NullOr(Schema.String).annotate({ description: "Set while a rotated key still works (24 h)." })
})
export type KeyView = typeof KeyView.Type

export const KeyList = Schema.Struct({
  keys: Schema.Array(KeyView),
  limit: Schema.Int.annotate({ description: "Active keys an account may hold." })
})

export const NewKeyRequest = Schema.Struct({
  name: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(100)))
})

/** A key as created: the secret is in this answer only. */
export const NewKey = Schema.Struct({
  ...KeyView.fields,
  key: Schema.String.annotate({ description: "The secret. Shown once; store it now." })
})

export const RotatedKey = Schema.Struct({
  ...NewKey.fields,
  replaced_key_id: Schema.String,
  replaced_key_expires_at: Schema.String.annotate({ description: "The old key keeps working until then (24 h)." })
})

export const AdminAccount = Schema.Struct({
  account_id: Schema.String,
  email: Schema.String,
  role: Role,
  plan: PlanId,
  plan_expires_at: Schema.NullOr(Schema.String),
  api_access: Schema.Boolean,
  signed_up: Schema.Boolean.annotate({ description: "Has a password (can sign in on the website)." }),
  balance_minutes: Schema.Number,
  created_at: Schema.String
})
export type AdminAccount = typeof AdminAccount.Type

export const AdminAccountList = Schema.Struct({ accounts: Schema.Array(AdminAccount) })

export const NewAccountRequest = Schema.Struct({ email: Email, api_access: Schema.optionalKey(Schema.Boolean) })

export const PlanRequest = Schema.Struct({ plan: PlanId })

export const CreditsRequest = Schema.Struct({
  minutes: Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(100_000_000)),
  note: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(500)))
})

export const CreditsGranted = Schema.Struct({
  account_id: Schema.String,
  balance_minutes: Schema.Number,
  unlocked_jobs: Schema.Int.annotate({ description: "Locked transcripts the credit paid for." })
})

export const CheckoutConfirmed = Schema.Struct({
  id: Schema.String,
  status: Schema.Literals(["pending", "paid", "expired"]),
  sku: Schema.String,
  minutes: Schema.Number,
  account_id: Schema.String,
  already_paid: Schema.Boolean
})

export const InviteRequest = Schema.Struct({ email: Email })

export const Invite = Schema.Struct({
  email: Schema.String,
  invite_url: Schema.String.annotate({ description: "Open it to sign up (`…/#/signup?invite=…`); one use." }),
  expires_at: Schema.String
})
