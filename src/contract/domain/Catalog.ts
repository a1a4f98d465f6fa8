/**
 * What can be bought, in one place (README "Billing" mirrors it). Packs are one-time
 * purchases whose minutes never expire; `team-monthly` also grants API access (creating
 * keys). `workspace-monthly` is the subscription: unlimited minutes, 10 concurrent
 * recordings, API access, for 30 days per payment.
 */
import { Schema } from "effect"

export const Sku = Schema.Literals(["mini-4", "pro-monthly", "team-monthly", "workspace-monthly"])
export type Sku = typeof Sku.Type

export interface Product {
  readonly sku: Sku
  readonly name: string
  readonly amountUsd: number
  /** Pack minutes credited once paid; 0 for the subscription. */
  readonly minutes: number
  readonly apiAccess: boolean
  /** Days of the Workspace plan a payment buys (subscription only). */
  readonly subscriptionDays: number
}

export const catalog: Record<Sku, Product> = {
  "mini-4": { sku: "mini-4", name: "Mini pack: 500 minutes", amountUsd: 4, minutes: 500, apiAccess: false, subscriptionDays: 0 },
  "pro-monthly": {
    sku: "pro-monthly",
    name: "Pro pack: 2,000 minutes",
    amountUsd: 15,
    minutes: 2000,
    apiAccess: false,
    subscriptionDays: 0
  },
  "team-monthly": {
    sku: "team-monthly",
    name: "Team pack: 5,000 minutes with API access",
    amountUsd: 29,
    minutes: 5000,
    apiAccess: true,
    subscriptionDays: 0
  },
  "workspace-monthly": {
    sku: "workspace-monthly",
    name: "Workspace: unlimited minutes, 10 concurrent recordings, 30 days",
    amountUsd: 99,
    minutes: 0,
    apiAccess: true,
    subscriptionDays: 30
  }
}

export const sellable: ReadonlyArray<Sku> = Sku.literals

/** Packs from smallest to largest: the first that covers a need is offered in a 402. */
export const packsBySize: ReadonlyArray<Product> = sellable
  .map((sku) => catalog[sku])
  .filter((product) => product.minutes > 0)
  .sort((a, b) => a.minutes - b.minutes)

/** The smallest pack covering `minutes` (the largest when none does). */
export const packCovering = (minutes: number): Product =>
  packsBySize.find((product) => product.minutes >= minutes) ?? packsBySize[packsBySize.length - 1]!

/**
 * Billing rounds each job up to the next whole second of audio, then counts minutes
 * (4 decimals). A 61.2 s recording costs 62/60 = 1.0333 minutes.
 */
export const billableMinutes = (durationSeconds: number) => Math.round((Math.ceil(durationSeconds) / 60) * 10_000) / 10_000
