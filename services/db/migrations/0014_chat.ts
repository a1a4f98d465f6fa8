/**
 * "Ask this recording": the questions a signed-in person asked about a job and what they were
 * answered (the moments found, and the written answer when an LLM is configured), kept per job
 * and per account. Rows go with the job or the account (cascade).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE chat_messages (
    id uuid PRIMARY KEY,
    job_id uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    question text NOT NULL,
    answer text,
    moments jsonb NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX chat_messages_job_account ON chat_messages (job_id, account_id, created_at)`
})
