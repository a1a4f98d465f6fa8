/**
 * Accounts: the owner of keys, jobs and one balance. Created by a website sign-up
 * (services/people) or by the operator (admin CLI); a person signs in to one account.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Account } from "../src/contract/domain/Account.ts"
import { AccountId } from "../src/contract/domain/Ids.ts"
import type { PlanId } from "../src/contract/domain/Plan.ts"
import { effectivePlan } from "./billing/Billing.ts"

export class AccountExists extends Schema.TaggedError<AccountExists>()("AccountExists", {
  email: Schema.String
}) {
  override get message() {
    return `An account with email ${this.email} already exists.`
  }
}

export class AccountNotFound extends Schema.TaggedError<AccountNotFound>()("AccountNotFound", {
  lookup: Schema.String
}) {
  override get message() {
    return `No account matches ${this.lookup}.`
  }
}

export class InvalidEmail extends Schema.TaggedError<InvalidEmail>()("InvalidEmail", {
  email: Schema.String
}) {
  override get message() {
    return `"${this.email}" is not an email address.`
  }
}

const normalizeEmail = (email: string) => email.trim().toLowerCase()
const emailShape = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

const decodeAccount = Schema.decodeUnknownEffect(Account)
const columns = "id, email, plan, plan_expires_at, api_access, created_at"

export class Accounts extends Context.Service<Accounts, {
  create(email: string): Effect.Effect<Account, AccountExists | InvalidEmail>
  findById(id: AccountId): Effect.Effect<Option.Option<Account>>
  /** Accepts an email or an account id, as the admin CLI does. */
  resolve(emailOrId: string): Effect.Effect<Account, AccountNotFound>
  setPlan(id: AccountId, plan: PlanId): Effect.Effect<Account, AccountNotFound>
  /** `paid` once the account bought anything or is on a subscription plan; else `free`. */
  tier(account: Account): Effect.Effect<"free" | "paid">
  /** Lets the account create API keys (the operator's override of the purchase rule). */
  grantApiAccess(id: AccountId): Effect.Effect<Account, AccountNotFound>
}>()("verbatim/accounts/Accounts") {
  static readonly layer = Layer.effect(
    Accounts,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decodeRows = (rows: ReadonlyArray<unknown>) =>
        Effect.forEach(rows, (row) => decodeAccount(row)).pipe(Effect.orDie)

      const create = Effect.fn("Accounts.create")(function*(rawEmail: string) {
        const email = normalizeEmail(rawEmail)
        if (!emailShape.test(email)) return yield* new InvalidEmail({ email: rawEmail })
        const now = new Date(yield* Clock.currentTimeMillis)
        const rows = yield* sql`INSERT INTO accounts (id, email, created_at)
          VALUES (${crypto.randomUUID()}, ${email}, ${now})
          ON CONFLICT (email) DO NOTHING
          RETURNING ${sql.literal(columns)}`.pipe(Effect.orDie)
        const [account] = yield* decodeRows(rows)
        if (account === undefined) return yield* new AccountExists({ email })
        return account
      })

      const findById = Effect.fn("Accounts.findById")(function*(id: AccountId) {
        const rows = yield* sql`SELECT ${sql.literal(columns)} FROM accounts WHERE id = ${id}`.pipe(Effect.orDie)
        return Option.fromNullishOr((yield* decodeRows(rows))[0])
      })

      const resolve = Effect.fn("Accounts.resolve")(function*(emailOrId: string) {
        const isId = Schema.is(AccountId)(emailOrId)
        const rows = isId
          ? yield* sql`SELECT ${sql.literal(columns)} FROM accounts WHERE id = ${emailOrId}`.pipe(Effect.orDie)
          : yield* sql`SELECT ${sql.literal(columns)} FROM accounts WHERE email = ${normalizeEmail(emailOrId)}`
            .pipe(Effect.orDie)
        const [account] = yield* decodeRows(rows)
        if (account === undefined) return yield* new AccountNotFound({ lookup: emailOrId })
        return account
      })

      const setPlan = Effect.fn("Accounts.setPlan")(function*(id: AccountId, plan: PlanId) {
        // The operator's plan has no end date; subscription plans include API access.
        const rows = yield* sql`UPDATE accounts SET plan = ${plan}, plan_expires_at = NULL,
            api_access = api_access OR ${plan !== "standard"} WHERE id = ${id}
          RETURNING ${sql.literal(columns)}`.pipe(Effect.orDie)
        const [account] = yield* decodeRows(rows)
        if (account === undefined) return yield* new AccountNotFound({ lookup: id })
        return account
      })

      const grantApiAccess = Effect.fn("Accounts.grantApiAccess")(function*(id: AccountId) {
        const rows = yield* sql`UPDATE accounts SET api_access = true WHERE id = ${id}
          RETURNING ${sql.literal(columns)}`.pipe(Effect.orDie)
        const [account] = yield* decodeRows(rows)
        if (account === undefined) return yield* new AccountNotFound({ lookup: id })
        return account
      })

      const tier = Effect.fn("Accounts.tier")(function*(account: Account) {
        if (effectivePlan(account, yield* Clock.currentTimeMillis) !== "standard") return "paid" as const
        const rows = yield* sql<{ paid: boolean }>`SELECT EXISTS (
          SELECT 1 FROM ledger WHERE account_id = ${account.id} AND kind = 'purchase') AS paid`.pipe(Effect.orDie)
        return rows[0]?.paid === true ? "paid" as const : "free" as const
      })

      return Accounts.of({ create, findById, resolve, setPlan, tier, grantApiAccess })
    })
  )
}
