/**
 * Completion callbacks (enterprise plan). When a job with a `webhook_url` ends, one event
 * is recorded — `job.done` or `job.failed` — and delivered by a background loop: POST
 * with a JSON body `{ type, timestamp, data: Job }`, signed in the style of Standard
 * Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256
 * of "id.timestamp.body">` keyed by the account's `whsec_` secret). Non-2xx answers and
 * network errors are retried with backoff (5 s, 30 s, 2 min, 10 min, 30 min, 2 h, 6 h,
 * 12 h); every attempt is recorded. Deliveries survive restarts: they live in the database.
 *
 * Every process that runs jobs runs the delivery loop, so a pass first claims the deliveries
 * it sends (one statement, rows locked with SKIP LOCKED): no other pass, in this process or
 * another, sends a claimed delivery. The claim carries a lease longer than a send can take,
 * so a slow receiver is not sent the delivery again while it is in flight, and short enough
 * that the claims of a crashed process lapse and their deliveries go out again. The attempt
 * is counted when it is claimed, since from then on the receiver may get it.
 *
 * Delivery is at least once, with one `webhook-id` per event: a process killed (SIGKILL, power
 * loss) after its POST reached the receiver but before it recorded the answer leaves a claim
 * that lapses after `claimLeaseMs`; the delivery is then sent again by another process, with
 * the same `webhook-id` (receivers drop an id they have seen, as Standard Webhooks asks). Only
 * deliveries in flight at that moment go twice (test/jobs/webhooks-multiprocess.test.ts).
 * Every outcome is logged: delivered, failed with its retry time or given up, and sent again
 * after a lapsed claim.
 *
 * The end event is recorded by `webhookConsumer`, a consumer of the job event outbox
 * (`JobEventFeed`): the `finished` event is committed with the job's end, and the delivery
 * row is written in the same transaction that moves the consumer's cursor, so each end of
 * a job is recorded exactly once even across crashes.
 */
import { Clock, Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { createHmac, randomBytes } from "node:crypto"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import { SafeFetcher } from "../links/SafeFetcher.ts"
import type { JobEventConsumer } from "../work/JobEventFeed.ts"
import type { JobRecord } from "./JobRecord.ts"
import { JobStore } from "./JobStore.ts"
import { toJobView } from "./JobViews.ts"

export const retryDelaysMs = [5_000, 30_000, 120_000, 600_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000]

/** A receiver that has not answered by then has failed this attempt. */
const sendTimeout = Duration.seconds(15)
/** Outlasts a send (secret, POST up to `sendTimeout`, the record) with a wide margin. */
const claimLeaseMs = 60_000
/** Deliveries one pass claims; it sends them concurrently, so one slow receiver does not hold up the rest. */
const batchSize = 20

interface ClaimedDelivery {
  readonly id: string
  readonly job_id: string
  /** The claim that lapsed unrecorded before this one (its process stopped mid-send), if any. */
  readonly lapsed_claim: string | null
  readonly account_id: AccountId
  readonly url: string
  readonly payload: unknown
  /** Including the one being made. */
  readonly attempts: number
}

export const signWebhook = (secret: string, id: string, timestamp: number, body: string) => {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64")
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`
}

export class JobEvents extends Context.Service<JobEvents, {
  /** Records the job's end event if it asked for a callback. */
  jobEnded(job: JobRecord): Effect.Effect<void>
  /** The account's signing secret, created on first use. */
  webhookSecret(accountId: AccountId): Effect.Effect<string>
  /** One pass over due deliveries: claims up to 20, sends them, returns how many (the loop runs this every second). */
  readonly deliverDue: Effect.Effect<number>
}>()("verbatim/jobs/JobEvents") {
  static readonly layer = Layer.effect(
    JobEvents,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const fetcher = yield* SafeFetcher

      const webhookSecret = Effect.fn("JobEvents.webhookSecret")(function*(accountId: AccountId) {
        const candidate = `whsec_${randomBytes(24).toString("base64")}`
        const [row] = yield* sql<{ webhook_secret: string }>`UPDATE accounts
          SET webhook_secret = COALESCE(webhook_secret, ${candidate}) WHERE id = ${accountId}
          RETURNING webhook_secret`.pipe(Effect.orDie)
        return row?.webhook_secret ?? candidate
      })

      const jobEnded = Effect.fn("JobEvents.jobEnded")(function*(job: JobRecord) {
        if (job.webhook_url === null || job.account_id === null) return
        const now = yield* Clock.currentTimeMillis
        const event = job.status === "done" ? "job.done" : "job.failed"
        const payload = { type: event, timestamp: new Date(now).toISOString(), data: toJobView(job, 0) }
        yield* sql`INSERT INTO webhook_deliveries (id, job_id, account_id, event, url, payload, next_attempt_at, created_at)
          VALUES (${crypto.randomUUID()}, ${job.id}, ${job.account_id}, ${event}, ${job.webhook_url},
            ${JSON.stringify(payload)}::jsonb, ${new Date(now)}, ${new Date(now)})`.pipe(Effect.orDie)
      })

      const attempt = (delivery: ClaimedDelivery) =>
        Effect.gen(function*() {
          const secret = yield* webhookSecret(delivery.account_id)
          const body = typeof delivery.payload === "string" ? delivery.payload : JSON.stringify(delivery.payload)
          const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          // The same address rules as link fetching, checked after DNS with the connection pinned:
          // no callbacks into private networks.
          return yield* fetcher.post(delivery.url, body, {
            "content-type": "application/json",
            "webhook-id": delivery.id,
            "webhook-timestamp": String(timestamp),
            "webhook-signature": signWebhook(secret, delivery.id, timestamp, body)
          }).pipe(
            Effect.mapError((error) => error.message),
            Effect.timeoutOrElse({ duration: sendTimeout, orElse: () => Effect.fail("timed out") })
          )
        }).pipe(Effect.result)

      /** Sends one claimed delivery and records the outcome. */
      const deliver = Effect.fnUntraced(function*(delivery: ClaimedDelivery, claim: string) {
        const result = yield* attempt(delivery)
        const status = result._tag === "Success" ? result.success : null
        const ok = status !== null && status >= 200 && status < 300
        const error = result._tag === "Failure" ? String(result.failure) : ok ? null : `HTTP ${status}`
        const delay = retryDelaysMs[delivery.attempts - 1]
        const at = new Date(yield* Clock.currentTimeMillis)
        const retryAt = ok || delay === undefined ? null : new Date(at.getTime() + delay)
        // A delivery once delivered stays so, whatever a later outcome says.
        const recorded = yield* sql`UPDATE webhook_deliveries SET last_status = ${status}, last_error = ${error},
            delivered_at = COALESCE(delivered_at, ${ok ? at : null}::timestamptz),
            next_attempt_at = CASE WHEN delivered_at IS NOT NULL THEN NULL ELSE ${retryAt}::timestamptz END,
            claim = NULL, claimed_until = NULL
          WHERE id = ${delivery.id} AND claim = ${claim} RETURNING id`.pipe(Effect.orDie)
        const fields = { delivery_id: delivery.id, job_id: delivery.job_id, attempt: delivery.attempts, status, error }
        if (recorded.length > 0) {
          yield* ok
            ? Effect.logInfo("webhook delivered", fields)
            : retryAt === null
            ? Effect.logWarning("webhook delivery given up after its last attempt", fields)
            : Effect.logWarning("webhook attempt failed; retried later", { ...fields, retry_at: retryAt.toISOString() })
          return
        }
        // The lease lapsed before the outcome came and another pass has claimed the delivery
        // (its attempt is counted too); that pass records its own outcome. A success still
        // counts: the receiver has the event.
        yield* Effect.logWarning("webhook delivery outcome arrived after its claim lapsed", { id: delivery.id, status, error })
        if (ok) {
          yield* sql`UPDATE webhook_deliveries SET delivered_at = COALESCE(delivered_at, ${at}), next_attempt_at = NULL
            WHERE id = ${delivery.id}`.pipe(Effect.orDie)
        }
      })

      const deliverDue = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const claim = crypto.randomUUID()
        const due = yield* sql<ClaimedDelivery>`WITH due AS (
            SELECT id, claim AS lapsed_claim FROM webhook_deliveries
            WHERE delivered_at IS NULL AND next_attempt_at IS NOT NULL AND next_attempt_at <= ${new Date(now)}
              AND (claimed_until IS NULL OR claimed_until <= ${new Date(now)})
            ORDER BY next_attempt_at LIMIT ${batchSize}
            FOR UPDATE SKIP LOCKED
          )
          UPDATE webhook_deliveries AS delivery
          SET claim = ${claim}, claimed_until = ${new Date(now + claimLeaseMs)}, attempts = delivery.attempts + 1
          FROM due WHERE delivery.id = due.id
          RETURNING delivery.id, delivery.job_id::text AS job_id, due.lapsed_claim::text AS lapsed_claim,
            delivery.account_id, delivery.url, delivery.payload, delivery.attempts`.pipe(Effect.orDie)
        for (const delivery of due) {
          if (delivery.lapsed_claim === null) continue
          // The receiver may already have this one: same webhook-id, so it can tell.
          yield* Effect.logWarning("webhook sent again: the previous attempt's claim lapsed without an outcome (its process stopped mid-send)", {
            delivery_id: delivery.id,
            job_id: delivery.job_id,
            attempt: delivery.attempts
          })
        }
        yield* Effect.forEach(due, (delivery) => deliver(delivery, claim), { concurrency: "unbounded", discard: true })
        return due.length
      }).pipe(Effect.withSpan("JobEvents.deliverDue"))

      return JobEvents.of({ jobEnded, webhookSecret, deliverDue })
    })
  )

  /** Records `job.done` / `job.failed` deliveries from the `finished` job events. */
  static readonly webhookConsumer = Effect.gen(function*() {
    const events = yield* JobEvents
    const store = yield* JobStore
    return {
      name: "webhooks",
      types: ["finished"],
      handle: (event) =>
        Effect.gen(function*() {
          const job = yield* store.getAny(event.job_id)
          if (Option.isSome(job) && (job.value.status === "done" || job.value.status === "failed")) {
            yield* events.jobEnded(job.value)
          }
          return []
        })
    } satisfies JobEventConsumer
  })

  /** The delivery loop, for processes that run jobs. */
  static readonly deliveryLoop = Layer.effectDiscard(
    Effect.gen(function*() {
      const events = yield* JobEvents
      yield* events.deliverDue.pipe(
        Effect.catchCause((cause) => Effect.logWarning("webhook delivery pass failed", cause)),
        Effect.repeat(Schedule.spaced(Duration.seconds(1))),
        Effect.forkScoped
      )
    })
  )
}

