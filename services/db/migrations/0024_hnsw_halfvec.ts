/**
 * On a Postgres server with pgvector, the passages' HNSW index rebuilt over the embeddings at
 * half precision (`halfvec`, pgvector ≥ 0.7): half the size and faster to walk. PGlite keeps
 * the full-precision index of 0023 (its WebAssembly build is slower at half precision), and the
 * exact-scan layout has no index. Measurements and the rule: search/HnswIndex.ts. The column
 * stays `vector(384)`.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { halfPrecisionFor, hnswIndexSql } from "../../../search/HnswIndex.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [column] = yield* sql<{ udt_name: string }>`SELECT udt_name FROM information_schema.columns
    WHERE table_name = 'search_passages' AND column_name = 'embedding'`
  if (column?.udt_name !== "vector") return
  const [server] = yield* sql<{ version: string }>`SELECT version() AS version`
  if (!halfPrecisionFor(server?.version ?? "")) return
  // The default 64 MB cannot hold a large library's graph; pgvector then builds far slower.
  yield* sql`SELECT set_config('maintenance_work_mem', '512MB', true)`
  yield* sql`DROP INDEX IF EXISTS search_passages_embedding`
  yield* sql.unsafe(hnswIndexSql(true))
})
