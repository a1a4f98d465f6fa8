/**
 * The credit ledger: every change of a balance is one appended row; a balance is a sum.
 * (Charging jobs and purchases build on this in the billing module.)
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { AccountId } from "../src/domain/Ids.ts"

export class InvalidAmount extends Schema.TaggedError<InvalidAmount>()("InvalidAmount", {
  minutes: Schema.Number
}) {
  override get message() {
    return `A grant must be a positive number of minutes (got ${this.minutes}).`
  }
}

export class Ledger extends Context.Service<Ledger, {
  /** Operator grant (admin CLI `credits grant`). */
  grant(accountId: AccountId, minutes: number, note?: string): Effect.Effect<{ readonly balanceMinutes: number }, InvalidAmount>
  balanceMinutes(accountId: AccountId): Effect.Effect<number>
}>()("verbatim/billing/Ledger") {
  static readonly layer = Layer.effect(
    Ledger,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const balanceMinutes = Effect.fn("Ledger.balanceMinutes")(function*(accountId: AccountId) {
        const rows = yield* sql<{ minutes: string | null }>`SELECT sum(minutes)::text AS minutes FROM ledger
          WHERE account_id = ${accountId}`.pipe(Effect.orDie)
        return Number(rows[0]?.minutes ?? 0)
      })

      const grant = Effect.fn("Ledger.grant")(function*(accountId: AccountId, minutes: number, note?: string) {
        if (!Number.isFinite(minutes) || minutes <= 0) return yield* new InvalidAmount({ minutes })
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* sql`INSERT INTO ledger (account_id, kind, minutes, ref, note, created_at)
          VALUES (${accountId}, 'grant', ${minutes}, ${crypto.randomUUID()}, ${note ?? null}, ${now})`.pipe(Effect.orDie)
        return { balanceMinutes: yield* balanceMinutes(accountId) }
      })

      return Ledger.of({ grant, balanceMinutes })
    })
  )
}
