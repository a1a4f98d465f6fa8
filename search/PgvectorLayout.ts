/**
 * The passages table's pgvector layout, read and built in one place: what the embedding column
 * is and which HNSW index it has (the backend, the bench and the tests read it), the index's
 * build (migrations 0023–0025, the bench's bulk load, the switch below), and the switch a
 * re-index makes when pgvector arrives after the table was made.
 *
 * A server without the extension got the exact-scan layout (`bytea` embeddings, migration
 * 0006); once an operator installs pgvector, `verbatim admin search reindex` switches the table
 * to pgvector's layout before it indexes every job again. The switch drops the stored passages:
 * their vectors are re-embedded by that re-index anyway, and converting 384 floats a row in SQL
 * would need a function of our own on the server.
 */
import { Clock, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { EMBEDDING_DIMENSIONS } from "./Embedder.ts"
import { hnswIndexSql, type IndexKind, indexKindFor } from "./HnswIndex.ts"

/** The embedding column's type (`vector`, `bytea`) and the HNSW index's definition, if any. */
export const embeddingLayout = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [column] = yield* sql<{ udt_name: string }>`SELECT udt_name FROM information_schema.columns
    WHERE table_name = 'search_passages' AND column_name = 'embedding'`
  const [index] = yield* sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes
    WHERE tablename = 'search_passages' AND indexname = 'search_passages_embedding'`
  return { column: column?.udt_name, indexdef: index?.indexdef }
})

/** The index kind this database builds (`indexKindFor` its version). */
export const indexKindHere = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [server] = yield* sql<{ version: string }>`SELECT version() AS version`
  return indexKindFor(server?.version ?? "")
})

/**
 * (Re)builds the HNSW index. Run it inside a transaction (a migration's, or the caller's): the
 * memory setting is the transaction's. The default 64 MB cannot hold a large library's graph;
 * pgvector then builds far slower.
 */
export const buildHnswIndex = (kind: IndexKind, memory = "512MB") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`SELECT set_config('maintenance_work_mem', ${memory}, true)`
    yield* sql`DROP INDEX IF EXISTS search_passages_embedding`
    yield* sql.unsafe(hnswIndexSql(kind))
  })

/**
 * A migration's rebuild of the index, announced in the log when the library is large enough for
 * start to wait on it noticeably: the service answers nothing until migrations finish, and an
 * operator upgrading a large library should see why and for how long. Per-passage rates measured
 * (bench/README.md, sessions 15–16): PGlite's sign-bit build 0.73 ms at 100k and 1.7 ms at 1M
 * (past ~700k the graph outgrows 512 MB and pgvector finishes on disk); a server's half-precision
 * build 0.6 ms at 1M. Never called by the re-index: its output is JSON on stdout.
 */
export const rebuildAtMigration = (kind: IndexKind, announceFrom = 20_000) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ passages: number }>`SELECT count(*)::int AS passages FROM search_passages`
    const passages = row?.passages ?? 0
    const announce = passages >= announceFrom
    const perPassageMs = kind === "half" ? 0.6 : passages > 700_000 ? 1.7 : 0.75
    if (announce) {
      yield* Effect.logInfo("rebuilding the search index before start").pipe(Effect.annotateLogs({
        passages,
        index: kind,
        expected_minutes: Math.max(1, Math.round(passages * perPassageMs / 60_000))
      }))
    }
    const started = yield* Clock.currentTimeMillis
    yield* buildHnswIndex(kind)
    if (announce) {
      yield* Effect.logInfo("search index rebuilt").pipe(Effect.annotateLogs({
        passages,
        index: kind,
        seconds: Math.round(((yield* Clock.currentTimeMillis) - started) / 1000)
      }))
    }
  })

/**
 * Whether the `vector` extension is installed, creating it when the server has it available.
 * Creating it may be refused (no privilege): false then. Its own (nested) transaction, so a
 * refusal inside a migration's transaction is a rolled-back savepoint.
 */
export const vectorExtension = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const installed = yield* sql`SELECT 1 FROM pg_extension WHERE extname = 'vector'`
  const available = yield* sql`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`
  return installed.length > 0 ||
    (available.length > 0 &&
      (yield* sql.withTransaction(sql`CREATE EXTENSION IF NOT EXISTS vector`).pipe(
        Effect.as(true),
        Effect.catch(() => Effect.succeed(false))
      )))
})

/**
 * Switches an exact-scan table to `vector(384)` under the HNSW index the migrations build,
 * when the extension is installed or can be created here; true when it did. Nothing to do
 * (false) on pgvector's layout already, or without the extension.
 */
export const adoptPgvector = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  if ((yield* embeddingLayout).column !== "bytea" || !(yield* vectorExtension)) return false
  const kind = yield* indexKindHere
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`DELETE FROM search_passages`
    yield* sql`ALTER TABLE search_passages DROP COLUMN embedding`
    yield* sql.unsafe(`ALTER TABLE search_passages ADD COLUMN embedding vector(${EMBEDDING_DIMENSIONS}) NOT NULL`)
    yield* buildHnswIndex(kind)
  }))
  return true
}).pipe(Effect.orDie)
