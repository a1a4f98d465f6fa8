/**
 * Tasks as data (issue 25 item 1): a task carries its typed parameters (`payload`, encoded by
 * its kind's Schema) instead of squeezing them into `sub_key`, may stand without a job
 * (`job_id` NULL: uniqueness then holds per kind and key, NULLS NOT DISTINCT), and waits for
 * its next attempt until `not_before` (the backoff after a failed attempt, kept in the row so a
 * restart or another runner keeps it). Existing `render-clip` tasks get their clip id as payload.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tasks ADD COLUMN payload jsonb`
  yield* sql`ALTER TABLE tasks ADD COLUMN not_before timestamptz`
  yield* sql`ALTER TABLE tasks ALTER COLUMN job_id DROP NOT NULL`
  yield* sql`ALTER TABLE tasks DROP CONSTRAINT tasks_kind_job_id_sub_key_key`
  yield* sql`ALTER TABLE tasks ADD CONSTRAINT tasks_kind_job_key UNIQUE NULLS NOT DISTINCT (kind, job_id, sub_key)`
  yield* sql`UPDATE tasks SET payload = jsonb_build_object('clipId', sub_key) WHERE kind = 'render-clip' AND payload IS NULL`
})
