/**
 * Clips: captioned 9:16 renders of a stretch of a job's recording. A clip belongs to the
 * job's account and goes with the job (cascade). Its minutes are charged once, in the
 * ledger under (clip_charge, clip id), when it is created; a render that fails for good
 * credits them back under (clip_refund, clip id). The render itself is a `render-clip`
 * task (job id, sub-key = clip id); `progress` and `status` are written by that task.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE clips (
    id uuid PRIMARY KEY,
    job_id uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    start_s double precision NOT NULL,
    end_s double precision NOT NULL,
    caption_style text NOT NULL,
    status text NOT NULL,
    progress real NOT NULL DEFAULT 0,
    object_key text,
    duration double precision,
    charged_minutes numeric(14, 4),
    error text,
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    completed_at timestamptz
  )`
  yield* sql`CREATE INDEX clips_job ON clips (job_id)`
})
