/**
 * The task engine (services/work): one row per durable task, unique per (kind, job, sub-key)
 * so that enqueueing twice names the same task; the job event outbox with a cursor per
 * consumer; and the marks that let processed cluster messages be deleted after a while
 * (the cluster's message table has no timestamp of its own).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE tasks (
    id uuid PRIMARY KEY,
    kind text NOT NULL,
    job_id uuid NOT NULL,
    sub_key text NOT NULL DEFAULT '',
    status text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    -- A rerun asked for while an attempt runs: the task starts over once that attempt ends.
    rerun boolean NOT NULL DEFAULT false,
    run_token uuid,
    last_error text,
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    attempt_at timestamptz,
    heartbeat_at timestamptz,
    finished_at timestamptz,
    UNIQUE (kind, job_id, sub_key)
  )`
  yield* sql`CREATE INDEX tasks_unfinished ON tasks (kind, heartbeat_at) WHERE status IN ('pending', 'running')`
  yield* sql`CREATE TABLE job_events (
    seq bigserial PRIMARY KEY,
    job_id uuid NOT NULL,
    account_id uuid,
    type text NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE job_event_cursors (
    consumer text PRIMARY KEY,
    position bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE cluster_cleanup_marks (
    taken_at timestamptz PRIMARY KEY,
    max_rowid bigint NOT NULL
  )`
})
