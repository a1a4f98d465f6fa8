/**
 * Speaker names a person gave a job's diarization labels (`PATCH /v1/jobs/{job_id}/speakers`):
 * one row per named label. They are kept apart from the stored transcript so that a name never
 * changes the transcript itself (its hash, its corrections, its search index): renders, insights
 * and search hits apply them when they are read. Rows go with their job (cascade on purge).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE speaker_names (
    job_id uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    label text NOT NULL,
    name text NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (job_id, label)
  )`
})
