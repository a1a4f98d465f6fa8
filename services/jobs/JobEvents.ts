/**
 * Completion callbacks (enterprise plan). When a job with a `webhook_url` ends, one event
 * is recorded — `job.done` or `job.failed` — as a row of `webhook_deliveries` and a task of the
 * `webhook` kind (WebhookDeliveryKind.ts, sent by WebhookDeliveryTask.ts): POST with a JSON body
 * `{ type, timestamp, data: Job }`, signed in the style of Standard Webhooks (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
 * keyed by the account's `whsec_` secret). Non-2xx answers, network errors and receivers
 * silent for 15 s are retried after 5 s, 30 s, 2 min, 10 min, 30 min, 2 h, 6 h and 12 h (9
 * attempts over ~21 h), then given up; every attempt is recorded in the delivery row (attempts,
 * last status or error, when the next one is due). Deliveries survive restarts: the row and its
 * task live in the database, and the wait before a retry is the task's `not_before`.
 *
 * Each delivery goes out once across processes: its task is claimed by one runner (row lock,
 * SKIP LOCKED) and held by the engine's lease while the POST is in flight, however slow the
 * receiver, so no other process sends it meanwhile. (Before, every process ran a delivery loop.)
 * A task per delivery rather than one cluster-wide loop: sends spread over every process's free
 * slots, and a crashed process stops only the deliveries it had in flight, for the lease expiry
 * (10 s), not all of them until a singleton's shard moves.
 *
 * Delivery is at least once, with one `webhook-id` per event (the delivery id): a process
 * killed (SIGKILL, power loss) after its POST reached the receiver but before it recorded the
 * answer leaves the delivery marked in flight (`claim`); once the lease expires another runner
 * claims the task and sends it again with the same `webhook-id` (receivers drop an id they
 * have seen, as Standard Webhooks asks), logging that it is sent again. Only deliveries in
 * flight at that moment go twice (test/jobs/webhooks-multiprocess.test.ts). Every outcome is
 * logged: delivered, failed with its retry time, given up, and sent again after a lost attempt.
 *
 * The end event is recorded by `webhookConsumer`, a consumer of the job event outbox
 * (`JobEventFeed`): the `finished` event is committed with the job's end, and the delivery
 * row and its task are written in the same transaction that moves the consumer's cursor, so
 * each end of a job is recorded exactly once even across crashes.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { createHmac, randomBytes } from "node:crypto"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import type { JobEventConsumer } from "../work/JobEventFeed.ts"
import { storeTask } from "../work/Tasks.ts"
import { TaskStore } from "../work/TaskStore.ts"
import type { JobRecord } from "./JobRecord.ts"
import { JobStore } from "./JobStore.ts"
import { toJobView } from "./JobViews.ts"
import { WebhookDelivery } from "./WebhookDeliveryKind.ts"

export const signWebhook = (secret: string, id: string, timestamp: number, body: string) => {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64")
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`
}

export class JobEvents extends Context.Service<JobEvents, {
  /**
   * Records the job's end event if it asked for a callback: the delivery row and its task (joins
   * the caller's transaction). Returns the task id, whose wake-up the caller sends after its commit.
   */
  jobEnded(job: JobRecord): Effect.Effect<Option.Option<string>>
  /** The account's signing secret, created on first use. */
  webhookSecret(accountId: AccountId): Effect.Effect<string>
  /**
   * Gives a task to every delivery still due that has none: rows an older process wrote during a
   * rolling upgrade (its event feed records deliveries the old way, and its delivery loop stopped
   * working with migration 0021). Idempotent; the housekeeping sweep runs it. Returns how many.
   */
  readonly adoptUntasked: () => Effect.Effect<number>
}>()("verbatim/jobs/JobEvents") {
  static readonly layer = Layer.effect(
    JobEvents,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const tasks = yield* TaskStore

      const webhookSecret = Effect.fn("JobEvents.webhookSecret")(function*(accountId: AccountId) {
        const candidate = `whsec_${randomBytes(24).toString("base64")}`
        const [row] = yield* sql<{ webhook_secret: string }>`UPDATE accounts
          SET webhook_secret = COALESCE(webhook_secret, ${candidate}) WHERE id = ${accountId}
          RETURNING webhook_secret`.pipe(Effect.orDie)
        return row?.webhook_secret ?? candidate
      })

      const jobEnded = Effect.fn("JobEvents.jobEnded")(function*(job: JobRecord) {
        if (job.webhook_url === null || job.account_id === null) return Option.none()
        const now = yield* Clock.currentTimeMillis
        const event = job.status === "done" ? "job.done" : "job.failed"
        const payload = { type: event, timestamp: new Date(now).toISOString(), data: toJobView(job, 0) }
        const id = crypto.randomUUID()
        yield* sql`INSERT INTO webhook_deliveries (id, job_id, account_id, event, url, payload, next_attempt_at, created_at)
          VALUES (${id}, ${job.id}, ${job.account_id}, ${event}, ${job.webhook_url},
            ${JSON.stringify(payload)}::jsonb, ${new Date(now)}, ${new Date(now)})`.pipe(Effect.orDie)
        const taskId = yield* storeTask(WebhookDelivery, { jobId: null, payload: id, key: id }).pipe(
          Effect.provideService(TaskStore, tasks)
        )
        return Option.some(taskId)
      })

      const adoptUntasked = Effect.fn("JobEvents.adoptUntasked")(function*() {
        const adopted = yield* sql`INSERT INTO tasks (id, kind, job_id, sub_key, payload, status, attempts, created_at, not_before)
          SELECT gen_random_uuid(), ${WebhookDelivery.kind}, NULL, d.id::text, to_jsonb(d.id::text), 'pending', d.attempts,
            d.created_at, d.next_attempt_at
          FROM webhook_deliveries d
          WHERE d.delivered_at IS NULL AND d.next_attempt_at IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.kind = ${WebhookDelivery.kind} AND t.job_id IS NULL AND t.sub_key = d.id::text)
          ON CONFLICT (kind, job_id, sub_key) DO NOTHING
          RETURNING sub_key`.pipe(Effect.orDie)
        if (adopted.length > 0) yield* Effect.logWarning(`${adopted.length} webhook deliveries without a task (written by an older process) adopted`)
        return adopted.length
      })

      return JobEvents.of({ jobEnded, webhookSecret, adoptUntasked })
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
          if (Option.isNone(job) || (job.value.status !== "done" && job.value.status !== "failed")) return []
          const task = yield* events.jobEnded(job.value)
          return Option.isSome(task) ? [{ storedTaskId: task.value }] : []
        })
    } satisfies JobEventConsumer
  })
}
