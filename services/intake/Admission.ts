/**
 * The rules the submission use case (`SubmitJob`) composes: the Idempotency-Key rule, the
 * option checks against the configured model, the webhook rule, the credit check, the keyless
 * sample allowance, the plan's concurrency cap, the job row, and handing the job to the
 * durable runner.
 *
 * `admit` answers `replay: true` with the earlier job when the idempotency key was used
 * before (the adapter turns that into a 200 with `X-Idempotent-Replay`); every refusal is
 * a contract error carrying its HTTP status. `release` undoes what the submit path stored
 * for a job that is not created after all (replay, cap reached, allowance used up).
 */
import { Context, Effect, Layer, Option } from "effect"
import {
  BadIdempotencyKey,
  ConcurrencyLimit,
  PaymentRequired,
  RateLimited,
  TierForbidden,
  ValidationFailed
} from "../../src/contract/api/Errors.ts"
import { submitDefaults } from "../../src/contract/api/JobsApi.ts"
import { type Caller, credentialScope } from "../../src/contract/api/Security.ts"
import { billableMinutes } from "../../src/contract/domain/Catalog.ts"
import type { SubmitAnswer } from "../../src/contract/domain/Job.ts"
import { isEnglishOnlyModel, languageRefusal } from "../../src/contract/domain/Languages.ts"
import { plans } from "../../src/contract/domain/Plan.ts"
import { LimitsConfig } from "../config/LimitsConfig.ts"
import { SpeechConfig } from "../config/SpeechConfig.ts"
import { Billing } from "../billing/Billing.ts"
import { Paywall } from "../billing/Paywall.ts"
import { JobDispatcher } from "../jobs/JobDispatcher.ts"
import type { NewJob } from "../jobs/JobRecord.ts"
import { IdempotencyKeys } from "../jobs/IdempotencyKeys.ts"
import { type Idempotency, JobStore } from "../jobs/JobStore.ts"
import { SafeFetcher } from "../links/SafeFetcher.ts"
import { SampleQuota } from "../SampleQuota.ts"
import { PromptTokens } from "./PromptTokens.ts"

/** The longest `prompt`, in Whisper tokens (OpenAI's limit; the pipeline's `MAX_PROMPT_TOKENS`). */
export const maxPromptTokens = 224

const idempotencyKeyShape = /^[A-Za-z0-9_.:/-]{1,255}$/

/** The caller side of a new job: owner or claim. */
const ownership = (caller: Caller, claimHash: string | null) =>
  caller._tag === "Account"
    ? { accountId: caller.account.id, apiKeyId: caller.keyId, guestClient: null, claimHash: null }
    : { accountId: null, apiKeyId: null, guestClient: caller.clientId, claimHash }

/**
 * `Idempotency-Key` is scoped per API key (per website session for a signed-in user's
 * `Authorization: Bearer vbs_…`; per address for keyless callers).
 */
export const idempotencyFor = (caller: Caller, key: string | undefined, operation: string): Idempotency | undefined =>
  key === undefined
    ? undefined
    : { scope: caller._tag === "Account" ? credentialScope(caller) : `guest:${caller.clientId}`, key, operation }

export interface Admitted {
  readonly answer: SubmitAnswer
  /** The idempotency key named an earlier job: nothing was created. */
  readonly replay: boolean
}

export interface AdmitRequest {
  readonly caller: Caller
  readonly job: Omit<NewJob, "accountId" | "apiKeyId" | "guestClient" | "claimHash">
  readonly idempotency: Idempotency | undefined
  readonly release: Effect.Effect<void>
}

export class Admission extends Context.Service<Admission, {
  /**
   * 422 unless the configured model transcribes `language` (absent: `auto`). The Schema only
   * knows Whisper's whole list; an English-only model takes `en` and `auto` alone. `loc` is
   * where the field sits in the request (`["body", "language"]` unless given).
   */
  checkLanguage(language: string | undefined, loc?: ReadonlyArray<string>): Effect.Effect<void, ValidationFailed>
  /** 422 when `prompt` is longer than 224 tokens of the configured model's tokenizer. */
  checkPrompt(prompt: string | null | undefined, loc?: ReadonlyArray<string>): Effect.Effect<void, ValidationFailed>
  /** 422 for `task=translate` on an English-only model (it was never trained to translate). */
  checkTask(task: string | undefined, loc?: ReadonlyArray<string>): Effect.Effect<void, ValidationFailed>
  /** The header as sent; undefined when absent; 400 BAD_IDEMPOTENCY_KEY when malformed. */
  checkIdempotencyKey(raw: string | undefined): Effect.Effect<string | undefined, BadIdempotencyKey>
  /**
   * Webhooks are an enterprise feature; anywhere else the job is not created. The URL must
   * pass the same address rules as link fetching, so a refusal comes now, not at delivery.
   */
  checkWebhook(caller: Caller, webhookUrl: string | undefined): Effect.Effect<string | null, TierForbidden | ValidationFailed>
  /**
   * Refuses a submit the balance cannot pay for (own-key callers on metered plans; keyless
   * samples are free previews). `durationSeconds` when the container told us.
   */
  creditCheck(caller: Caller, durationSeconds: number | undefined, base: string): Effect.Effect<void, PaymentRequired>
  /**
   * Creates the job (or finds the replay). Called by `SubmitJob.submit` once the options passed its
   * checks (language, prompt and task for the configured model), so no path queues a job its model
   * cannot run.
   */
  admit(request: AdmitRequest): Effect.Effect<Admitted, RateLimited | ConcurrencyLimit>
}>()("verbatim/intake/Admission") {
  static readonly layer = Layer.effect(
    Admission,
    Effect.gen(function*() {
      const store = yield* JobStore
      const keys = yield* IdempotencyKeys
      const quota = yield* SampleQuota
      const config = { ...(yield* LimitsConfig), ...(yield* SpeechConfig) }
      const dispatcher = yield* JobDispatcher
      const fetcher = yield* SafeFetcher
      const billing = yield* Billing
      const paywall = yield* Paywall
      const promptTokens = yield* PromptTokens

      const checkLanguage = Effect.fn("Admission.checkLanguage")(
        function*(language: string | undefined, loc: ReadonlyArray<string> = ["body", "language"]) {
          const refusal = languageRefusal(config.model, language ?? submitDefaults.language)
          if (refusal === undefined) return
          return yield* new ValidationFailed({ error: refusal, code: "VALIDATION_FAILED", detail: [{ loc, msg: refusal }] })
        }
      )

      const checkPrompt = Effect.fn("Admission.checkPrompt")(
        function*(prompt: string | null | undefined, loc: ReadonlyArray<string> = ["body", "prompt"]) {
          if (prompt === undefined || prompt === null) return
          const tokens = yield* promptTokens.count(prompt)
          if (tokens === undefined || tokens <= maxPromptTokens) return
          const msg = `prompt is ${tokens} tokens for the model ${config.model}; at most ${maxPromptTokens} are allowed.`
          return yield* new ValidationFailed({ error: msg, code: "VALIDATION_FAILED", detail: [{ loc, msg }] })
        }
      )

      const checkTask = Effect.fn("Admission.checkTask")(
        function*(task: string | undefined, loc: ReadonlyArray<string> = ["body", "task"]) {
          if (task !== "translate" || !isEnglishOnlyModel(config.model)) return
          const msg = `task=translate needs a multilingual model; the configured model ${config.model} is English-only ` +
            "(VERBATIM_MODEL=whisper-base translates)."
          return yield* new ValidationFailed({ error: msg, code: "VALIDATION_FAILED", detail: [{ loc, msg }] })
        }
      )

      const checkIdempotencyKey = Effect.fn("Admission.checkIdempotencyKey")(function*(raw: string | undefined) {
        if (raw === undefined) return undefined
        if (!idempotencyKeyShape.test(raw)) {
          return yield* new BadIdempotencyKey({
            error: "Idempotency-Key must be 1 to 255 characters from A-Z a-z 0-9 _ . : / -."
          })
        }
        return raw
      })

      const checkWebhook = Effect.fn("Admission.checkWebhook")(function*(caller: Caller, webhookUrl: string | undefined) {
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

      const creditCheck = Effect.fn("Admission.creditCheck")(
        function*(caller: Caller, durationSeconds: number | undefined, base: string) {
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
        }
      )

      const admit = Effect.fn("Admission.admit")(function*(request: AdmitRequest) {
        const { caller } = request
        const replayOf = (job: { readonly id: SubmitAnswer["job_id"]; readonly status: SubmitAnswer["status"] }) =>
          Effect.as(request.release, { answer: { job_id: job.id, status: job.status }, replay: true })

        // A replay is answered before anything is spent (a keyless retry must not use up a sample).
        if (request.idempotency !== undefined) {
          const earlier = yield* keys.find(request.idempotency.scope, request.idempotency.key)
          if (Option.isSome(earlier)) return yield* replayOf(earlier.value)
        }
        let claimToken: string | undefined
        let claimHash: string | null = null
        if (caller._tag === "Guest") {
          const decision = yield* quota.consume(caller.clientId, config.samplesPerDay)
          if (!decision.allowed) {
            yield* request.release
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
          { ...request.job, ...ownership(caller, claimHash) },
          {
            idempotency: request.idempotency,
            concurrencyLimit: caller._tag === "Account" ? plans[caller.account.plan].concurrentJobs : undefined
          }
        ).pipe(
          Effect.catchTag("ConcurrencyLimitReached", (reached) =>
            Effect.andThen(
              request.release,
              new ConcurrencyLimit({
                error: `The plan runs ${reached.limit} recordings at once and ${reached.running} are queued or ` +
                  "transcribing; retry when one finishes.",
                limit: reached.limit,
                running: reached.running,
                retry_after: 30
              })
            ))
        )
        if (created.replay) return yield* replayOf(created.job)
        yield* dispatcher.dispatch(created.job.id)
        const answer: SubmitAnswer = claimToken === undefined
          ? { job_id: created.job.id, status: created.job.status }
          : { job_id: created.job.id, status: created.job.status, claim_token: claimToken }
        return { answer, replay: false }
      })

      return Admission.of({ checkLanguage, checkPrompt, checkTask, checkIdempotencyKey, checkWebhook, creditCheck, admit })
    })
  )
}
