/**
 * Links in answers refused for lack of credit: a pay link (`checkout_url`) for the smallest
 * pack covering what is needed — the open one for that sku, or a new one — and the price
 * list (`upgrade_url`). If the account already opened six links this hour, the price list
 * stands in for the pay link.
 */
import { Effect } from "effect"
import { AppConfig } from "../../services/AppConfig.ts"
import { Checkouts } from "../../services/billing/Checkouts.ts"
import { packCovering, type Sku } from "../contract/domain/Catalog.ts"
import type { AccountId } from "../contract/domain/Ids.ts"

export const makePaywall = Effect.gen(function*() {
  const checkouts = yield* Checkouts
  const config = yield* AppConfig

  const pricingUrl = (base: string) => `${base}/pricing`
  const checkoutPageUrl = (base: string, id: string) => `${base}/checkout/${id}`

  const checkoutUrlFor = (accountId: AccountId, sku: Sku, base: string) =>
    checkouts.open(accountId, sku, config.paymentProvider).pipe(
      Effect.map((checkout) => checkoutPageUrl(base, checkout.id)),
      Effect.catchTag("TooManyCheckouts", () => Effect.succeed(pricingUrl(base)))
    )

  /** The pay link for the smallest pack that covers `minutes`. */
  const coveringUrl = (accountId: AccountId, minutes: number, base: string) =>
    checkoutUrlFor(accountId, packCovering(minutes).sku, base)

  return { pricingUrl, checkoutPageUrl, checkoutUrlFor, coveringUrl }
})
