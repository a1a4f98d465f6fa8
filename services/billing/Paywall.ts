/**
 * Links in answers refused for lack of credit: a pay link (`checkout_url`) for the smallest
 * pack covering what is needed — the open one for that sku, or a new one — and the price
 * list (`upgrade_url`). If the account already opened six links this hour, the price list
 * stands in for the pay link. `base` is the API root the caller reached (links are absolute).
 */
import { Context, Effect, Layer } from "effect"
import { PaymentRequired } from "../../src/contract/api/Errors.ts"
import { billableMinutes, packCovering, type Sku } from "../../src/contract/domain/Catalog.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import { BillingConfig } from "../config/BillingConfig.ts"
import { Checkouts } from "./Checkouts.ts"

export class Paywall extends Context.Service<Paywall, {
  pricingUrl(base: string): string
  checkoutPageUrl(base: string, id: string): string
  checkoutUrlFor(accountId: AccountId, sku: Sku, base: string): Effect.Effect<string>
  /** The pay link for the smallest pack that covers `minutes`. */
  coveringUrl(accountId: AccountId, minutes: number, base: string): Effect.Effect<string>
  /**
   * The 402 `transcript_locked` answer for a locked job of `accountId` with `audioSeconds` of
   * audio: `error` (what is locked), the price list and a pay link covering the job.
   */
  transcriptLocked(accountId: AccountId, audioSeconds: number, base: string, error: string): Effect.Effect<PaymentRequired>
}>()("verbatim/billing/Paywall") {
  static readonly layer = Layer.effect(
    Paywall,
    Effect.gen(function*() {
      const checkouts = yield* Checkouts
      const config = yield* BillingConfig

      const pricingUrl = (base: string) => `${base}/pricing`
      const checkoutPageUrl = (base: string, id: string) => `${base}/checkout/${id}`

      const checkoutUrlFor = Effect.fn("Paywall.checkoutUrlFor")(function*(accountId: AccountId, sku: Sku, base: string) {
        return yield* checkouts.open(accountId, sku, config.paymentProvider).pipe(
          Effect.map((checkout) => checkoutPageUrl(base, checkout.id)),
          Effect.catchTag("TooManyCheckouts", () => Effect.succeed(pricingUrl(base)))
        )
      })

      const coveringUrl = (accountId: AccountId, minutes: number, base: string) =>
        checkoutUrlFor(accountId, packCovering(minutes).sku, base)

      const transcriptLocked = Effect.fn("Paywall.transcriptLocked")(function*(
        accountId: AccountId,
        audioSeconds: number,
        base: string,
        error: string
      ) {
        const needed = billableMinutes(audioSeconds)
        return new PaymentRequired({
          error,
          code: "transcript_locked",
          upgrade_url: pricingUrl(base),
          checkout_url: yield* coveringUrl(accountId, needed, base),
          required_minutes: needed
        })
      })

      return Paywall.of({ pricingUrl, checkoutPageUrl, checkoutUrlFor, coveringUrl, transcriptLocked })
    })
  )
}
