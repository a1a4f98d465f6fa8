import { Schema } from "effect"
import { AccountId } from "./Ids.ts"
import { PlanId } from "./Plan.ts"

/** An account as stored. Emails are kept lower-cased and trimmed; they identify the account. */
export const Account = Schema.Struct({
  id: AccountId,
  email: Schema.String,
  plan: PlanId,
  /** When a Workspace period bought through checkout ends; null = no end (set by the operator). */
  plan_expires_at: Schema.NullOr(Schema.Date),
  /** May create API keys: the 5,000-minute pack, Workspace, or granted by the operator. */
  api_access: Schema.Boolean,
  created_at: Schema.Date
})
export type Account = typeof Account.Type
