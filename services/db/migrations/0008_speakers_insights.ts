/**
 * Speakers and insights.
 * - `jobs.diarization`: how diarization of a `diarize=true` job ended, `done` or `failed`
 *   (null while it has not run, and for jobs without diarization). Written by the run that
 *   completes the job, in the same statement.
 * - `job_insights`: the stored insights of a job, one row per job, written once by the
 *   `insights` task when generation succeeded (`status = 'done'`, the payload) or found too
 *   little speech (`status = 'no_speech'`, no payload). `transcript_hash` is the SHA-256 of the
 *   transcript it was made from: a row whose hash is not the current transcript's is stale and
 *   never served. Rows go with their job (cascade on purge; removed on correction or delete by
 *   the insights invalidation consumer). A failed generation writes nothing.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE jobs ADD COLUMN diarization text`
  yield* sql`CREATE TABLE job_insights (
    job_id uuid PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    transcript_hash text NOT NULL,
    status text NOT NULL,
    payload jsonb,
    words integer NOT NULL,
    generation_ms integer NOT NULL,
    generated_at timestamptz NOT NULL
  )`
})
