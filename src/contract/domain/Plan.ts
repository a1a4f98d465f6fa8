/**
 * The plans an account can be on. Plans decide request rate, concurrent recordings and
 * completion callbacks; minutes come from the ledger (packs) or, on Workspace, are
 * unlimited. `GET /v1/me` reports the caller's plan under `plan`.
 */
import { Schema } from "effect"

export const PlanId = Schema.Literals(["standard", "workspace", "enterprise"])
export type PlanId = typeof PlanId.Type

export interface PlanSpec {
  readonly id: PlanId
  readonly name: string
  /** Recordings queued or transcribing at once, across all the account's keys. */
  readonly concurrentJobs: number
  /** Enterprise only: `webhook_url` on submit; everyone else polls. */
  readonly webhooks: boolean
  readonly unlimitedMinutes: boolean
  /** Which request-rate setting applies (the numbers themselves are configuration). */
  readonly rateTier: "standard" | "enterprise"
}

export const plans: Record<PlanId, PlanSpec> = {
  standard: {
    id: "standard",
    name: "Standard",
    concurrentJobs: 5,
    webhooks: false,
    unlimitedMinutes: false,
    rateTier: "standard"
  },
  workspace: {
    id: "workspace",
    name: "Workspace",
    concurrentJobs: 10,
    webhooks: false,
    unlimitedMinutes: true,
    rateTier: "standard"
  },
  enterprise: {
    id: "enterprise",
    name: "Enterprise",
    concurrentJobs: 20,
    webhooks: true,
    unlimitedMinutes: true,
    rateTier: "enterprise"
  }
}

/** How a plan is shown to API callers (`GET /v1/me` → `plan`). */
export const PlanView = Schema.Struct({
  id: PlanId,
  name: Schema.String,
  requests_per_minute: Schema.Int,
  concurrent_jobs: Schema.Int,
  unlimited_minutes: Schema.Boolean,
  completion: Schema.Literals(["poll", "webhook"])
}).annotate({ description: "The caller's plan. `completion` is `webhook` only where `webhook_url` is accepted." })
export type PlanView = typeof PlanView.Type
