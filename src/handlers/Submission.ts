/**
 * What every submit path shares once it knows its input: idempotency, the webhook rule,
 * the keyless sample allowance, the plan's concurrency cap, the job row, and handing the
 * job to the durable runner.
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { JobDispatcher } from "../../services/jobs/JobDispatcher.ts"
import type { NewJob } from "../../services/jobs/JobRecord.ts"
import { type Idempotency, JobStore } from "../../services/jobs/JobStore.ts"
import { SampleQuota } from "../../services/SampleQuota.ts"
import { BadIdempotencyKey, ConcurrencyLimit, RateLimited, TierForbidden, ValidationFailed } from "../api/Errors.ts"
import type { Caller } from "../api/Security.ts"
import type { SubmitAnswer } from "../domain/Job.ts"
import { plans } from "../domain/Plan.ts"

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

/** Webhooks are an enterprise feature; anywhere else the job is not created. */
export const checkWebhook = Effect.fnUntraced(function*(caller: Caller, webhookUrl: string | undefined) {
  if (webhookUrl === undefined) return null
  if (caller._tag !== "Account" || !plans[caller.account.plan].webhooks) {
    return yield* new TierForbidden({
      error: "webhook_url needs the enterprise plan; poll GET /v1/jobs/{job_id} instead (see GET /v1/me)."
    })
  }
  const url = URL.canParse(webhookUrl) ? new URL(webhookUrl) : undefined
  if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
    return yield* new ValidationFailed({
      error: "webhook_url must be an http(s) URL.",
      code: "VALIDATION_FAILED",
      detail: [{ loc: ["body", "webhook_url"], msg: "Expected an http(s) URL" }]
    })
  }
  return url.href
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
