/**
 * What every submit path shares once it knows its input: idempotency, the webhook rule,
 * the keyless sample allowance, the plan's concurrency cap, the job row, and handing the
 * job to the durable runner.
 */
import { Effect, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { JobDispatcher } from "../../services/jobs/JobDispatcher.ts"
import type { NewJob } from "../../services/jobs/JobRecord.ts"
import { type Idempotency, JobStore } from "../../services/jobs/JobStore.ts"
import { SampleQuota } from "../../services/SampleQuota.ts"
import { BadIdempotencyKey, ConcurrencyLimit, PaymentRequired, RateLimited, TierForbidden, ValidationFailed } from "../contract/api/Errors.ts"
import { Billing } from "../../services/billing/Billing.ts"
import { SafeFetcher } from "../../services/links/SafeFetcher.ts"
import { billableMinutes } from "../contract/domain/Catalog.ts"
import { makePaywall } from "./Paywall.ts"
import type { Caller } from "../contract/api/Security.ts"
import type { SubmitAnswer } from "../contract/domain/Job.ts"
import { plans } from "../contract/domain/Plan.ts"

const idempotencyKeyShape = /^[A-Za-z0-9_.:/-]{1,255}$/

export const checkIdempotencyKey = Effect.fnUntraced(function*(raw: string | undefined) {
  if (raw === undefined) return undefined
  if (!idempotencyKeyShape.test(raw)) {
    return yield* new BadIdempotencyKey({
      error: "Idempotency-Key must be 1 to 255 characters from A-Z a-z 0-9 _ . : / -."
    })
  }
  return raw
})

/**
 * Webhooks are an enterprise feature; anywhere else the job is not created. The URL must
 * pass the same address rules as link fetching (no loopback, private or bare host names),
 * so a refusal comes now rather than at delivery time.
 */
export const makeCheckWebhook = Effect.gen(function*() {
  const fetcher = yield* SafeFetcher
  return Effect.fnUntraced(function*(caller: Caller, webhookUrl: string | undefined) {
    if (webhookUrl === undefined) return null
    if (caller._tag !== "Account" || !plans[caller.account.plan].webhooks) {
      return yield* new TierForbidden({
        error: "webhook_url needs the enterprise plan; poll GET /v1/jobs/{job_id} instead (see GET /v1/me)."
      })
    }
    const url = yield* fetcher.checkUrl(webhookUrl).pipe(
      Effect.mapError((refused) =>
        new ValidationFailed({
          error: `webhook_url is not usable: ${refused.message}`,
          code: "VALIDATION_FAILED",
          detail: [{ loc: ["body", "webhook_url"], msg: refused.message }]
        })
      )
    )
    return url.href
  })
})

/** The caller side of a new job: owner or claim, and the idempotency scope. */
export const ownership = (caller: Caller, claimHash: string | null) =>
  caller._tag === "Account"
    ? { accountId: caller.account.id, apiKeyId: caller.keyId, guestClient: null, claimHash: null }
    : { accountId: null, apiKeyId: null, guestClient: caller.clientId, claimHash }

/** `Idempotency-Key` is scoped per API key (per address for keyless callers). */
export const idempotencyFor = (caller: Caller, key: string | undefined, operation: string): Idempotency | undefined =>
  key === undefined
    ? undefined
    : { scope: caller._tag === "Account" ? `key:${caller.keyId}` : `guest:${caller.clientId}`, key, operation }

export const replayResponse = (answer: SubmitAnswer) =>
  HttpServerResponse.jsonUnsafe(answer, { status: 200, headers: { "x-idempotent-replay": "true" } })

/**
 * Creates and dispatches the job. `release` undoes whatever the submit path stored for a
 * job that is not created after all (replay, cap reached, allowance used up).
 */
export const makeAdmit = Effect.gen(function*() {
  const store = yield* JobStore
  const quota = yield* SampleQuota
  const config = yield* AppConfig
  const dispatcher = yield* JobDispatcher

  return Effect.fnUntraced(function*(options: {
  readonly caller: Caller
  readonly job: Omit<NewJob, "accountId" | "apiKeyId" | "guestClient" | "claimHash">
  readonly idempotency: Idempotency | undefined
  readonly release: Effect.Effect<void>
}) {
  const { caller } = options

  let claimToken: string | undefined
  let claimHash: string | null = null
  // A replay is answered before anything is spent (a keyless retry must not use up a sample).
  if (options.idempotency !== undefined) {
    const earlier = yield* store.findByIdempotency(options.idempotency.scope, options.idempotency.key)
    if (Option.isSome(earlier)) {
      yield* options.release
      return replayResponse({ job_id: earlier.value.id, status: earlier.value.status })
    }
  }
  if (caller._tag === "Guest") {
    const decision = yield* quota.consume(caller.clientId, config.samplesPerDay)
    if (!decision.allowed) {
      yield* options.release
      return yield* new RateLimited({
        error: `Keyless use allows ${config.samplesPerDay} sample transcriptions a day; ` +
          "use an API key for more, or retry after the Retry-After seconds.",
        code: "QUOTA_EXCEEDED",
        retry_after: decision.retryAfterSeconds
      })
    }
    const claim = quota.newClaimToken()
    claimToken = claim.token
    claimHash = claim.hash
  }

  const created = yield* store.create(
    { ...options.job, ...ownership(caller, claimHash) },
    {
      idempotency: options.idempotency,
      concurrencyLimit: caller._tag === "Account" ? plans[caller.account.plan].concurrentJobs : undefined
    }
  ).pipe(
    Effect.catchTag("ConcurrencyLimitReached", (reached) =>
      Effect.andThen(
        options.release,
        new ConcurrencyLimit({
          error: `The plan runs ${reached.limit} recordings at once and ${reached.running} are queued or ` +
            "transcribing; retry when one finishes.",
          limit: reached.limit,
          running: reached.running,
          retry_after: 30
        })
      ))
  )
  if (created.replay) {
    yield* options.release
    return replayResponse({ job_id: created.job.id, status: created.job.status })
  }
  yield* dispatcher.dispatch(created.job.id)
  const answer: SubmitAnswer = claimToken === undefined
    ? { job_id: created.job.id, status: created.job.status }
    : { job_id: created.job.id, status: created.job.status, claim_token: claimToken }
  return answer
})
})

/**
 * Refuses a submit the balance cannot pay for (own-key callers on metered plans; keyless
 * samples are free previews). `durationSeconds` when the container told us.
 */
export const makeCreditCheck = Effect.gen(function*() {
  const billing = yield* Billing
  const paywall = yield* makePaywall
  return Effect.fnUntraced(function*(caller: Caller, durationSeconds: number | undefined, base: string) {
    if (caller._tag !== "Account") return
    if (!(yield* billing.metered(caller.account.id))) return
    const balance = yield* billing.balanceMinutes(caller.account.id)
    if (balance <= 0) {
      return yield* new PaymentRequired({
        error: "The account has no credit left. Pay the checkout_url, wait until GET /v1/checkout/{id} says paid, " +
          "then send the same request again.",
        code: "NO_CREDITS",
        checkout_url: yield* paywall.coveringUrl(caller.account.id, 1, base),
        upgrade_url: paywall.pricingUrl(base),
        balance_minutes: balance
      })
    }
    if (durationSeconds === undefined) return
    const needed = billableMinutes(durationSeconds)
    if (needed > balance) {
      return yield* new PaymentRequired({
        error: `The recording needs ${needed.toFixed(2)} minutes and the balance is ${balance.toFixed(2)}; ` +
          "pay the checkout_url, then send the same request again.",
        code: "INSUFFICIENT_CREDITS_FOR_DURATION",
        checkout_url: yield* paywall.coveringUrl(caller.account.id, needed - balance, base),
        upgrade_url: paywall.pricingUrl(base),
        balance_minutes: balance,
        required_minutes: needed
      })
    }
  })
})
