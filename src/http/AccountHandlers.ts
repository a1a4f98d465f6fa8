import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Accounts } from "../../services/Accounts.ts"
import { LimitsConfig } from "../../services/config/LimitsConfig.ts"
import { Api } from "../contract/api/Api.ts"
import { CurrentCaller } from "../contract/api/Security.ts"
import { plans } from "../contract/domain/Plan.ts"

/** Audio and transcripts are kept until deleted; the contract reports it as 100 years. */
export const retentionDays = 36500

export const AccountHandlers = HttpApiBuilder.group(
  Api,
  "account",
  Effect.fn(function*(handlers) {
    const accounts = yield* Accounts
    const config = yield* LimitsConfig
    return handlers.handle("me", () =>
      Effect.gen(function*() {
        const caller = yield* CurrentCaller
        if (caller._tag === "Guest") {
          return {
            email: null,
            tier: "guest" as const,
            retention_days: retentionDays,
            signed_in: false,
            account_id: null,
            plan: null
          }
        }
        const { account } = caller
        const plan = plans[account.plan]
        return {
          email: account.email,
          tier: yield* accounts.tier(account),
          retention_days: retentionDays,
          // A website session's access token (`Bearer vbs_…`) is a user sign-in; a key is not.
          signed_in: caller.sessionId !== null,
          account_id: account.id,
          plan: {
            id: plan.id,
            name: plan.name,
            requests_per_minute: plan.rateTier === "enterprise"
              ? config.enterpriseRateLimitPerMinute
              : config.rateLimitPerMinute,
            concurrent_jobs: plan.concurrentJobs,
            unlimited_minutes: plan.unlimitedMinutes,
            completion: plan.webhooks ? "webhook" as const : "poll" as const
          }
        }
      }))
  })
)

export const SystemHandlers = HttpApiBuilder.group(
  Api,
  "system",
  Effect.fn(function*(handlers) {
    return handlers.handle("health", () => Effect.succeed({ status: "ok" as const }))
  })
)
