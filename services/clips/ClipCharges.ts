/**
 * Clip minutes on the ledger, metered like transcription: a clip of `s` seconds costs
 * `billableMinutes(s)`, charged once when the clip is created — the ledger's unique
 * (kind, ref) with kind `clip_charge` and ref = clip id makes it once — inside the
 * transaction that creates the clip, with the account row locked so concurrent requests can
 * neither overdraw nor double-charge. Plans with unlimited minutes charge nothing, nor does the
 * installation's owner (Billing's `unmetered`). A render
 * that fails for good is credited back once (`clip_refund`, same ref); deleting a clip does
 * not refund, as deleting a job does not.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { billableMinutes } from "../../src/contract/domain/Catalog.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import type { PlanId } from "../../src/contract/domain/Plan.ts"
import { Billing, unmetered } from "../billing/Billing.ts"

export class InsufficientCredit extends Schema.TaggedError<InsufficientCredit>()("InsufficientCredit", {
  requiredMinutes: Schema.Number,
  balanceMinutes: Schema.Number
}) {}

export class ClipCharges extends Context.Service<ClipCharges, {
  /** Must run inside the transaction that creates the clip; returns the minutes charged. */
  charge(accountId: AccountId, clipId: string, seconds: number): Effect.Effect<number, InsufficientCredit>
  /** Credits a charged clip back (idempotent). */
  refund(accountId: AccountId, clipId: string): Effect.Effect<void>
}>()("verbatim/clips/ClipCharges") {
  static readonly layer = Layer.effect(
    ClipCharges,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const billing = yield* Billing

      const charge = Effect.fn("ClipCharges.charge")(function*(accountId: AccountId, clipId: string, seconds: number) {
        const at = yield* Clock.currentTimeMillis
        const [account] = yield* sql<{ plan: PlanId; plan_expires_at: Date | null; role: string }>`SELECT plan,
          plan_expires_at, role FROM accounts WHERE id = ${accountId} FOR UPDATE`.pipe(Effect.orDie)
        if (account !== undefined && unmetered(account, at)) return 0
        const minutes = billableMinutes(seconds)
        const balance = yield* billing.balanceMinutes(accountId)
        if (balance + 1e-9 < minutes) {
          return yield* new InsufficientCredit({ requiredMinutes: minutes, balanceMinutes: balance })
        }
        yield* sql`INSERT INTO ledger (account_id, kind, minutes, ref, created_at)
          VALUES (${accountId}, 'clip_charge', ${-minutes}, ${clipId}, ${new Date(at)})
          ON CONFLICT (kind, ref) DO NOTHING`.pipe(Effect.orDie)
        return minutes
      })

      const refund = Effect.fn("ClipCharges.refund")(function*(accountId: AccountId, clipId: string) {
        const at = new Date(yield* Clock.currentTimeMillis)
        yield* sql`INSERT INTO ledger (account_id, kind, minutes, ref, note, created_at)
          SELECT account_id, 'clip_refund', -minutes, ref, 'clip render failed', ${at}
          FROM ledger WHERE kind = 'clip_charge' AND ref = ${clipId} AND account_id = ${accountId} AND minutes < 0
          ON CONFLICT (kind, ref) DO NOTHING`.pipe(Effect.orDie)
        // Credit back may cover a job that was locked meanwhile.
        yield* billing.unlockCovered(accountId)
      })

      return ClipCharges.of({ charge, refund })
    })
  )
}
