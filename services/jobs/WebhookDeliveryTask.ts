/**
 * The `webhook` task kind: one attempt sends one delivery (payload: its id) and records the
 * outcome in `webhook_deliveries`; the promises (signature, one `webhook-id` per event, the
 * retry schedule, at least once) are in JobEvents' module comment.
 *
 * One attempt:
 * 1. Counts the send in the row and marks it in flight (`claim`, a fresh id per attempt) before
 *    anything goes out: from then on the receiver may get it. A mark still set from an earlier
 *    attempt means that attempt stopped mid-send (its process was killed, or stopped while the
 *    receiver held the request): the receiver may have the event already, which is logged as
 *    sent again. A delivery already delivered, or gone, is not sent.
 * 2. POSTs it (address rules of link fetching, at most `sendTimeoutMs`).
 * 3. Records the status or error and clears the mark, only while the mark is its own. A 2xx ends
 *    the task; anything else fails the attempt (`TaskFailed`), and the engine schedules the next
 *    one after the kind's delay for this attempt, or gives the task up after the 9th.
 *
 * Registration: `WebhookDeliveryTask` in `taskKinds` (layers/App.ts); needs `JobEvents` (the
 * signing secret), `SafeFetcher` and the SqlClient.
 */
import { Clock, Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import { SafeFetcher } from "../links/SafeFetcher.ts"
import { type GiveUpReason, type GivenUpTask, TaskFailed, type TaskHandler, type TaskRun } from "../work/TaskKind.ts"
import { JobEvents, signWebhook } from "./JobEvents.ts"
import { retryDelaysMs, sendTimeoutMs, WebhookDelivery } from "./WebhookDeliveryKind.ts"

interface DeliveryToSend {
  readonly id: string
  readonly job_id: string
  /** The in-flight mark an earlier attempt left unrecorded (it stopped mid-send), if any. */
  readonly lapsed_claim: string | null
  readonly account_id: AccountId
  readonly url: string
  readonly payload: unknown
  /** Sends counted so far, including this one. */
  readonly attempts: number
}

export const WebhookDeliveryTask = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const fetcher = yield* SafeFetcher
  const events = yield* JobEvents

  const post = (delivery: DeliveryToSend) =>
    Effect.gen(function*() {
      const secret = yield* events.webhookSecret(delivery.account_id)
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
        Effect.timeoutOrElse({ duration: sendTimeoutMs, orElse: () => Effect.fail("timed out") })
      )
    }).pipe(Effect.result)

  const run = Effect.fnUntraced(function*(task: TaskRun<string, "none">) {
    const claim = crypto.randomUUID()
    const [delivery] = yield* sql<DeliveryToSend>`WITH previous AS (
        SELECT id, claim FROM webhook_deliveries WHERE id = ${task.payload} AND delivered_at IS NULL FOR UPDATE
      )
      UPDATE webhook_deliveries AS delivery SET attempts = delivery.attempts + 1, claim = ${claim}
      FROM previous WHERE delivery.id = previous.id
      RETURNING delivery.id::text AS id, delivery.job_id::text AS job_id, previous.claim::text AS lapsed_claim,
        delivery.account_id, delivery.url, delivery.payload, delivery.attempts`.pipe(Effect.orDie)
    if (delivery === undefined) return { result: "nothing to send: delivered already, or the delivery is gone" }
    const fields = { delivery_id: delivery.id, job_id: delivery.job_id, attempt: delivery.attempts }
    if (delivery.lapsed_claim !== null) {
      // The receiver may already have this one: same webhook-id, so it can tell.
      yield* Effect.logWarning("webhook sent again: the previous attempt stopped mid-send without an outcome").pipe(
        Effect.annotateLogs(fields)
      )
    }

    const result = yield* post(delivery)
    const status = result._tag === "Success" ? result.success : null
    const ok = status !== null && status >= 200 && status < 300
    const error = result._tag === "Failure" ? String(result.failure) : ok ? null : `HTTP ${status}`
    const at = new Date(yield* Clock.currentTimeMillis)
    const delay = ok ? undefined : retryDelaysMs[task.attempt - 1]
    // No delay after the 9th attempt: the engine gives the task up.
    const retryAt = delay === undefined ? null : new Date(at.getTime() + delay)
    // A delivery once delivered stays so, whatever a later outcome says. Another attempt's mark
    // (this one's lease was lost meanwhile) is left alone: that attempt records its own outcome;
    // a success still counts, the receiver has the event.
    yield* sql`UPDATE webhook_deliveries SET
        last_status = CASE WHEN claim = ${claim} THEN ${status} ELSE last_status END,
        last_error = CASE WHEN claim = ${claim} THEN ${error} ELSE last_error END,
        delivered_at = COALESCE(delivered_at, ${ok ? at : null}::timestamptz),
        next_attempt_at = CASE WHEN ${ok} OR delivered_at IS NOT NULL THEN NULL
          WHEN claim = ${claim} THEN ${retryAt}::timestamptz ELSE next_attempt_at END,
        claim = CASE WHEN claim = ${claim} OR ${ok} THEN NULL ELSE claim END
      WHERE id = ${delivery.id}`.pipe(Effect.orDie)
    if (ok) {
      yield* Effect.logInfo("webhook delivered").pipe(Effect.annotateLogs({ ...fields, status }))
      return { result: "webhook delivered" }
    }
    yield* Effect.logWarning(retryAt === null ? "webhook attempt failed; it was the last" : "webhook attempt failed; retried later").pipe(
      Effect.annotateLogs({ ...fields, status, error, ...(retryAt === null ? {} : { retry_at: retryAt.toISOString() }) })
    )
    return yield* new TaskFailed({ reason: error ?? "failed" })
  })

  const giveUp = Effect.fnUntraced(function*(task: GivenUpTask<string, "none">, reason: GiveUpReason) {
    const id = task.payload ?? task.subKey
    const ended = yield* sql<{ attempts: number }>`UPDATE webhook_deliveries SET next_attempt_at = NULL, claim = NULL
      WHERE id::text = ${id} AND delivered_at IS NULL RETURNING attempts`.pipe(Effect.orDie)
    if (ended.length === 0) return
    yield* Effect.logWarning("webhook delivery given up").pipe(
      Effect.annotateLogs({ delivery_id: id, reason, attempts: ended[0]!.attempts })
    )
  })

  return { ...WebhookDelivery, run, giveUp } satisfies TaskHandler<string, "none">
})
