import { Schema } from "effect"
import { AccountId } from "./Ids.ts"
import { PlanId } from "./Plan.ts"

/** An account as stored. Emails are kept lower-cased and trimmed; they identify the account. */
export const Account = Schema.Struct({
  id: AccountId,
  email: Schema.String,
  plan: PlanId,
  created_at: Schema.Date
})
export type Account = typeof Account.Type
