/**
 * Webhook deliveries become tasks of the `webhook` kind (services/jobs/WebhookDeliveryKind.ts),
 * and effect/cluster's tables are no longer cleaned from outside (issue 25).
 *
 * - Every delivery still due (not delivered, a next attempt set) gets its task, waiting until its
 *   `next_attempt_at`, with the attempts already made counted, so the 9-attempt cap still holds.
 *   A delivery an older process had in flight keeps its `claim`: its next attempt logs that it
 *   is sent again, with the same `webhook-id`.
 * - `claimed_until` and the due-delivery index served the per-process delivery loop, which is
 *   gone: the task's lease does that now. Dropping the column also stops an older process still
 *   running beside a new one from sending deliveries (its loop's claim statement fails), so a
 *   rolling upgrade does not send a delivery twice. Such a process may still record deliveries
 *   (its event feed writes the row without a task): the housekeeping sweep gives them their
 *   task (`JobEvents.adoptUntasked`).
 * - `cluster_cleanup_marks` served the pass that deleted processed cluster messages by row id
 *   (MessageCleanup, removed): the task wake-up is volatile now, so no message rows are written.
 *   Rows such a pass had not deleted yet stay in `cluster_messages`, untouched and never read
 *   again.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO tasks (id, kind, job_id, sub_key, payload, status, attempts, created_at, not_before)
    SELECT gen_random_uuid(), 'webhook', NULL, id::text, to_jsonb(id::text), 'pending', attempts, created_at, next_attempt_at
    FROM webhook_deliveries WHERE delivered_at IS NULL AND next_attempt_at IS NOT NULL
    ON CONFLICT (kind, job_id, sub_key) DO NOTHING`
  yield* sql`DROP INDEX IF EXISTS webhook_deliveries_due`
  yield* sql`ALTER TABLE webhook_deliveries DROP COLUMN claimed_until`
  yield* sql`DROP TABLE IF EXISTS cluster_cleanup_marks`
})
