/**
 * Completion callbacks (enterprise plan). When a job with a `webhook_url` ends, one event
 * is recorded — `job.done` or `job.failed` — and delivered by a background loop: POST
 * with a JSON body `{ type, timestamp, data: Job }`, signed in the style of Standard
 * Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256
 * of "id.timestamp.body">` keyed by the account's `whsec_` secret). Non-2xx answers and
 * network errors are retried with backoff (5 s, 30 s, 2 min, 10 min, 30 min, 2 h, 6 h,
 * 12 h); every attempt is recorded. Deliveries survive restarts: they live in the database.
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

export const signWebhook = (secret: string, id: string, timestamp: number, body: string) => {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64")
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`
}

export class JobEvents extends Context.Service<JobEvents, {
  /** Records the job's end event if it asked for a callback. */
  jobEnded(job: JobRecord): Effect.Effect<void>
  /** The account's signing secret, created on first use. */
  webhookSecret(accountId: AccountId): Effect.Effect<string>
  /** One pass over due deliveries (the loop runs this every second). */
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

      const attempt = (delivery: { id: string; account_id: AccountId; url: string; payload: unknown }) =>
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
            Effect.timeoutOrElse({ duration: Duration.seconds(15), orElse: () => Effect.fail("timed out") })
          )
        }).pipe(Effect.result)

      const deliverDue = Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const due = yield* sql<{ id: string; account_id: AccountId; url: string; payload: unknown; attempts: number }>`
          SELECT id, account_id, url, payload, attempts FROM webhook_deliveries
          WHERE delivered_at IS NULL AND next_attempt_at IS NOT NULL AND next_attempt_at <= ${now}
          ORDER BY next_attempt_at LIMIT 20`.pipe(Effect.orDie)
        for (const delivery of due) {
          const result = yield* attempt(delivery)
          const status = result._tag === "Success" ? result.success : null
          const ok = status !== null && status >= 200 && status < 300
          const attempts = delivery.attempts + 1
          const delay = retryDelaysMs[attempts - 1]
          const at = new Date(yield* Clock.currentTimeMillis)
          yield* sql`UPDATE webhook_deliveries SET attempts = ${attempts}, last_status = ${status},
              last_error = ${result._tag === "Failure" ? String(result.failure) : ok ? null : `HTTP ${status}`},
              delivered_at = ${ok ? at : null},
              next_attempt_at = ${ok || delay === undefined ? null : new Date(at.getTime() + delay)}
            WHERE id = ${delivery.id}`.pipe(Effect.orDie)
        }
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

