import { Effect } from "effect"
import { Billing } from "../../services/billing/Billing.ts"
import { UsageReport } from "../../services/billing/UsageReport.ts"
import type { Usage } from "../contract/api/BillingApi.ts"
import type { AccountId } from "../contract/domain/Ids.ts"

/** `GET /v1/usage` (and the MCP `balance` tool): usage figures and the balance left. */
export const makeUsageView = Effect.gen(function*() {
  const usage = yield* UsageReport
  const billing = yield* Billing
  return Effect.fn("UsageView")(function*(accountId: AccountId) {
    const figures = yield* usage.figures(accountId)
    const metered = yield* billing.metered(accountId)
    const balance = yield* billing.balanceMinutes(accountId)
    const entries = yield* usage.recentEntries(accountId, 10)
    return {
      minutes_today: figures.minutesToday,
      daily_allowance_minutes: metered ? Math.max(0, Math.round(balance * 100) / 100) : null,
      minutes_month_to_date: figures.minutesMonthToDate,
      queue_depth: figures.queueDepth,
      average_job_seconds: figures.averageJobSeconds,
      recent_charges: entries.map((entry) => ({
        kind: entry.kind,
        minutes: Math.round(entry.minutes * 100) / 100,
        ref: entry.ref,
        note: entry.note,
        created_at: Math.floor(entry.createdAt.getTime() / 1000)
      }))
    } satisfies typeof Usage.Type
  })
})
