/**
 * The passages table's layout when pgvector arrives after it was made: a server without the
 * extension got the exact-scan layout (`bytea` embeddings, migration 0006); once an operator
 * installs pgvector, a re-index (`verbatim admin search reindex`) switches the table to pgvector's
 * layout before it indexes every job again. The switch drops the stored passages: their
 * vectors are re-embedded by that re-index anyway, and converting 384 floats a row in SQL would
 * need a function of our own on the server.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { EMBEDDING_DIMENSIONS } from "./Embedder.ts"
import { halfPrecisionFor, hnswIndexSql } from "./HnswIndex.ts"

/**
 * Switches an exact-scan table to `vector(384)` under the HNSW index the migrations build
 * (0023/0024), when the extension is installed or can be created here; true when it did.
 * Nothing to do (false) on pgvector's layout already, or without the extension.
 */
export const adoptPgvector = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [column] = yield* sql<{ udt_name: string }>`SELECT udt_name FROM information_schema.columns
    WHERE table_name = 'search_passages' AND column_name = 'embedding'`
  if (column?.udt_name !== "bytea") return false
  const installed = (yield* sql`SELECT 1 FROM pg_extension WHERE extname = 'vector'`).length > 0
  const available = (yield* sql`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`).length > 0
  // As migration 0006: creating the extension may be refused (no privilege); the table then stays.
  const vector = installed ||
    (available &&
      (yield* sql`CREATE EXTENSION IF NOT EXISTS vector`.pipe(Effect.as(true), Effect.catch(() => Effect.succeed(false)))))
  if (!vector) return false
  const [server] = yield* sql<{ version: string }>`SELECT version() AS version`
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`DELETE FROM search_passages`
    yield* sql`ALTER TABLE search_passages DROP COLUMN embedding`
    yield* sql.unsafe(`ALTER TABLE search_passages ADD COLUMN embedding vector(${EMBEDDING_DIMENSIONS}) NOT NULL`)
    yield* sql`SELECT set_config('maintenance_work_mem', '512MB', true)`
    yield* sql`DROP INDEX IF EXISTS search_passages_embedding`
    yield* sql.unsafe(hnswIndexSql(halfPrecisionFor(server?.version ?? "")))
  }))
  return true
}).pipe(Effect.orDie)
