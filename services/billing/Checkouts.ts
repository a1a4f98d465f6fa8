/**
 * Pay links. A checkout record (`txn_…`) is `pending` for 48 hours, then `expired`; asking
 * again for a sku while one is open returns the same record; an account may open six new
 * links an hour. Payment is confirmed by a provider (the built-in one: the operator, with
 * `verbatim admin checkout confirm`; or Paddle's signed webhook). Credit lands exactly once
 * on the account that asked for the link, whoever paid: the record flips to `paid` under a
 * row lock and the ledger entry is keyed by the checkout id.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { catalog, type Sku } from "../../src/contract/domain/Catalog.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import type { CheckoutConfirmed } from "../../src/contract/domain/People.ts"
import { numbersFromBigInt } from "../db/BigIntColumns.ts"
import { Billing } from "./Billing.ts"

export const checkoutLifetimeMs = 48 * 3600 * 1000
export const newLinksPerHour = 6

export const CheckoutRecord = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  sku: Schema.String,
  amount_usd: Schema.Union([Schema.Number, Schema.NumberFromString]),
  minutes: Schema.Number,
  status: Schema.Literals(["pending", "paid", "expired"]),
  provider: Schema.String,
  provider_ref: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  expires_at: Schema.Date,
  paid_at: Schema.NullOr(Schema.Date)
})
export type CheckoutRecord = typeof CheckoutRecord.Type

const decodeCheckout = Schema.decodeUnknownEffect(CheckoutRecord)

/** What confirming a pay link reports, on the Admin API and from `verbatim admin checkout confirm` alike. */
export const checkoutConfirmation = (
  { alreadyPaid, checkout }: { readonly checkout: CheckoutRecord; readonly alreadyPaid: boolean }
): typeof CheckoutConfirmed.Type => ({
  id: checkout.id,
  status: checkout.status,
  sku: checkout.sku,
  minutes: checkout.minutes,
  account_id: checkout.account_id,
  already_paid: alreadyPaid
})

export class TooManyCheckouts extends Schema.TaggedError<TooManyCheckouts>()("TooManyCheckouts", {
  retryAfterSeconds: Schema.Int
}) {}

export class CheckoutNotFound extends Schema.TaggedError<CheckoutNotFound>()("CheckoutNotFound", {
  id: Schema.String
}) {
  override get message() {
    return `No checkout ${this.id}.`
  }
}

export class CheckoutExpired extends Schema.TaggedError<CheckoutExpired>()("CheckoutExpired", {
  id: Schema.String
}) {
  override get message() {
    return `Checkout ${this.id} expired unpaid; ask for a new link.`
  }
}

export class Checkouts extends Context.Service<Checkouts, {
  /** The open link for this sku, or a new one (at most six new an hour). */
  open(accountId: AccountId, sku: Sku, provider: string): Effect.Effect<CheckoutRecord, TooManyCheckouts>
  /** The record as it stands now (a pending one past 48 h reads, and is stored, as expired). */
  get(id: string): Effect.Effect<Option.Option<CheckoutRecord>>
  /**
   * Marks the checkout paid and credits its account, once: a second notice for the same
   * checkout changes nothing and reports `alreadyPaid`.
   */
  pay(id: string, providerRef: string | null): Effect.Effect<{ readonly checkout: CheckoutRecord; readonly alreadyPaid: boolean }, CheckoutNotFound | CheckoutExpired>
}>()("verbatim/billing/Checkouts") {
  static readonly layer = Layer.effect(
    Checkouts,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const billing = yield* Billing
      const decodeOne = (rows: ReadonlyArray<unknown>) =>
        Effect.map(Effect.forEach(rows, (row) => decodeCheckout(numbersFromBigInt(row))), (all) => Option.fromNullishOr(all[0]))
          .pipe(Effect.orDie)

      const expireStale = (at: Date) =>
        sql`UPDATE checkouts SET status = 'expired' WHERE status = 'pending' AND expires_at <= ${at}`.pipe(Effect.orDie)

      const open = Effect.fn("Checkouts.open")(function*(accountId: AccountId, sku: Sku, provider: string) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const at = new Date(now)
          yield* sql`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`
          yield* expireStale(at)
          const existing = yield* decodeOne(
            yield* sql`SELECT * FROM checkouts WHERE account_id = ${accountId} AND sku = ${sku} AND status = 'pending'`
          )
          if (Option.isSome(existing)) return existing.value
          const hourAgo = new Date(now - 3600_000)
          const recent = yield* sql<{ created_at: Date }>`SELECT created_at FROM checkouts
            WHERE account_id = ${accountId} AND created_at > ${hourAgo} ORDER BY created_at`
          if (recent.length >= newLinksPerHour) {
            const oldest = recent[0]!.created_at.getTime()
            return yield* new TooManyCheckouts({ retryAfterSeconds: Math.max(1, Math.ceil((oldest + 3600_000 - now) / 1000)) })
          }
          const product = catalog[sku]
          const rows = yield* sql`INSERT INTO checkouts ${
            sql.insert({
              id: `txn_${randomBytes(12).toString("hex")}`,
              account_id: accountId,
              sku,
              amount_usd: product.amountUsd,
              minutes: product.minutes,
              status: "pending",
              provider,
              created_at: at,
              expires_at: new Date(now + checkoutLifetimeMs)
            })
          } RETURNING *`
          return Option.getOrThrow(yield* decodeOne(rows))
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

      const get = Effect.fn("Checkouts.get")(function*(id: string) {
        yield* expireStale(new Date(yield* Clock.currentTimeMillis))
        return yield* decodeOne(yield* sql`SELECT * FROM checkouts WHERE id = ${id}`.pipe(Effect.orDie))
      })

      const pay = Effect.fn("Checkouts.pay")(function*(id: string, providerRef: string | null) {
        const outcome = yield* sql.withTransaction(Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const found = yield* decodeOne(yield* sql`SELECT * FROM checkouts WHERE id = ${id} FOR UPDATE`)
          if (Option.isNone(found)) return yield* new CheckoutNotFound({ id })
          const checkout = found.value
          if (checkout.status === "paid") return { checkout, alreadyPaid: true }
          if (checkout.expires_at.getTime() <= now) return yield* new CheckoutExpired({ id })
          const rows = yield* sql`UPDATE checkouts SET status = 'paid', paid_at = ${new Date(now)},
              provider_ref = ${providerRef} WHERE id = ${id} AND status = 'pending' RETURNING *`
          const paid = Option.getOrThrow(yield* decodeOne(rows))
          const product = catalog[paid.sku as Sku]
          const accountId = paid.account_id as AccountId
          if (product.apiAccess) yield* sql`UPDATE accounts SET api_access = true WHERE id = ${accountId}`
          if (product.subscriptionDays > 0) {
            // A payment extends the Workspace period from its current end (or from now).
            yield* sql`UPDATE accounts SET plan = 'workspace',
                plan_expires_at = GREATEST(COALESCE(plan_expires_at, ${new Date(now)}), ${new Date(now)})
                  + make_interval(days => ${product.subscriptionDays})
              WHERE id = ${accountId} AND plan <> 'enterprise'`
          }
          yield* sql`INSERT INTO ledger (account_id, kind, minutes, ref, note, created_at)
            VALUES (${accountId}, ${product.subscriptionDays > 0 ? "plan_period" : "purchase"}, ${product.minutes},
              ${paid.id}, ${paid.sku}, ${new Date(now)})
            ON CONFLICT (kind, ref) DO NOTHING`
          return { checkout: paid, alreadyPaid: false }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        if (!outcome.alreadyPaid) yield* billing.unlockCovered(outcome.checkout.account_id as AccountId)
        return outcome
      })

      return Checkouts.of({ open, get, pay })
    })
  )
}
