import { Schema } from "effect"
import { AccountId, ApiKeyId } from "./Ids.ts"

/**
 * An API key as listed (never the secret itself: only its hash is stored).
 * `status`: `active`; `rotating` (replaced, still valid until `expires_at`);
 * `expired`; `revoked`.
 */
export const ApiKeyRecord = Schema.Struct({
  id: ApiKeyId,
  account_id: AccountId,
  name: Schema.NullOr(Schema.String),
  prefix: Schema.String,
  created_at: Schema.Date,
  expires_at: Schema.NullOr(Schema.Date),
  revoked_at: Schema.NullOr(Schema.Date),
  last_used_at: Schema.NullOr(Schema.Date)
})
export type ApiKeyRecord = typeof ApiKeyRecord.Type

export type ApiKeyStatus = "active" | "rotating" | "expired" | "revoked"

export const keyStatus = (key: ApiKeyRecord, now: number): ApiKeyStatus =>
  key.revoked_at !== null
    ? "revoked"
    : key.expires_at === null
    ? "active"
    : key.expires_at.getTime() > now
    ? "rotating"
    : "expired"
