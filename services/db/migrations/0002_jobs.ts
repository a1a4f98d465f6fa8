/**
 * Jobs, their stored transcripts, direct-upload tickets, idempotency keys and webhook
 * deliveries. A job row is the durable truth about a transcription: the runner may crash
 * at any moment and resumes from here.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE jobs (
    id uuid PRIMARY KEY,
    account_id uuid REFERENCES accounts (id) ON DELETE CASCADE,
    api_key_id uuid,
    guest_client text,
    claim_hash text,
    status text NOT NULL,
    source text NOT NULL,
    input_kind text NOT NULL,
    filename text,
    object_key text,
    size_bytes bigint,
    content_type text,
    input_url text,
    resolved_media jsonb,
    language_requested text NOT NULL DEFAULT 'auto',
    diarize boolean NOT NULL DEFAULT false,
    word_timestamps boolean NOT NULL DEFAULT false,
    webhook_url text,
    progress real NOT NULL DEFAULT 0,
    audio_duration_seconds double precision,
    language text,
    speech_detected boolean,
    speech_ratio double precision,
    locked boolean NOT NULL DEFAULT false,
    error text,
    error_code text,
    retryable boolean,
    attempts integer NOT NULL DEFAULT 0,
    run_token uuid,
    heartbeat_at timestamptz,
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    completed_at timestamptz,
    deleted_at timestamptz,
    purged_at timestamptz
  )`
  yield* sql`CREATE INDEX jobs_account_created ON jobs (account_id, created_at DESC)`
  yield* sql`CREATE INDEX jobs_unfinished ON jobs (created_at) WHERE status IN ('queued', 'processing')`
  yield* sql`CREATE TABLE transcripts (
    job_id uuid PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    body jsonb NOT NULL,
    corrected_at timestamptz
  )`
  yield* sql`CREATE TABLE upload_tickets (
    job_id uuid PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    api_key_id uuid,
    object_key text NOT NULL,
    filename text NOT NULL,
    size_bytes bigint NOT NULL,
    content_type text NOT NULL,
    options jsonb NOT NULL,
    expires_at timestamptz NOT NULL,
    received_bytes bigint,
    committed_at timestamptz,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE idempotency_keys (
    scope text NOT NULL,
    key text NOT NULL,
    operation text NOT NULL,
    job_id uuid NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
  )`
  yield* sql`CREATE TABLE webhook_deliveries (
    id uuid PRIMARY KEY,
    job_id uuid NOT NULL,
    account_id uuid NOT NULL,
    event text NOT NULL,
    url text NOT NULL,
    payload jsonb NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    last_status integer,
    last_error text,
    next_attempt_at timestamptz,
    delivered_at timestamptz,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE delivered_at IS NULL`
})
