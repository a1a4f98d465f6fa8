/**
 * Library search passages (see search/Passages.ts): text with its full-text vector in the
 * job's language configuration, and a MiniLM embedding (384 dimensions).
 *
 * With pgvector (PGlite always ships it; a server needs the package, e.g.
 * `apt install postgresql-15-pgvector`, then a superuser `CREATE EXTENSION vector`
 * before this migration runs) the embedding is `vector(384)` under an HNSW cosine
 * index. Without it the embedding is stored as 384 little-endian float32 in `bytea`
 * and the search scans the account's rows exactly: every query reads 1.5 kB per
 * passage of the account (≈15 MB for 10k passages), linear in the library's size.
 * Installing pgvector later does not convert the column here: `verbatim admin search reindex`
 * does (search/PgvectorLayout.ts).
 *
 * No foreign key to `jobs`: the index is derived data (the Meilisearch backend keeps the
 * same rows elsewhere); the search service removes a job's passages itself.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { vectorExtension } from "../../../search/PgvectorLayout.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A refused CREATE EXTENSION (no privilege) leaves the migration usable with the fallback.
  const vector = yield* vectorExtension
  yield* sql`CREATE TABLE search_passages (
    id bigserial PRIMARY KEY,
    account_id uuid NOT NULL,
    job_id uuid NOT NULL,
    kind text NOT NULL,
    start double precision NOT NULL,
    "end" double precision NOT NULL,
    speaker text,
    text text NOT NULL,
    moments jsonb NOT NULL,
    filename text,
    language text,
    ts_config regconfig NOT NULL,
    created_at timestamptz NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector(ts_config, text)) STORED,
    embedding ${sql.literal(vector ? "vector(384)" : "bytea")} NOT NULL
  )`
  yield* sql`CREATE INDEX search_passages_job ON search_passages (job_id, start)`
  yield* sql`CREATE INDEX search_passages_account ON search_passages (account_id, created_at)`
  yield* sql`CREATE INDEX search_passages_tsv ON search_passages USING gin (tsv)`
  if (vector) {
    yield* sql`CREATE INDEX search_passages_embedding ON search_passages USING hnsw (embedding vector_cosine_ops)`
  }
})
