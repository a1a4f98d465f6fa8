/**
 * The passages' HNSW index as the migrations build it (0023–0025) and the Postgres backend
 * walks it: the backend's ORDER BY must be the index's own expression, or the planner sorts
 * the whole account's rows instead.
 */
import type { SqlClient, Statement } from "effect/sql"

/** pgvector's build options (its defaults are m 16, ef_construction 64; why 128: migration 0023). */
export const HNSW_OPTIONS = "m = 16, ef_construction = 128"

/**
 * What the index is built over:
 * - `half` (a native server, migration 0024): the stored `vector(384)` cast to half precision;
 * - `bit` (PGlite, migration 0025): its sign bits (`binary_quantize`, 48 bytes a passage), walked
 *   by Hamming distance for `hnsw.ef_search` rows (800, `BIT_EF_SEARCH`, and 1000 from
 *   500,000 passages on: `setEfSearch` in PostgresSearchBackend.ts, where the whole search's
 *   figures are) that are then ordered by their
 *   full-precision cosine. Measured (2026-11-27, PGlite, 100k passages of real MiniLM vectors,
 *   300 held-out passages as queries, nearest 10 against the exact ones): 100 rows → recall@10
 *   0.875, 200 → 0.935, 400 → 0.969 (p50 5.5 / p99 10–19 ms), 800 → 0.988 (p50 10 ms); the
 *   full-precision index at ef_search 400: 0.999, p50 10 ms;
 * - `full`: the stored vectors themselves (a database last migrated by 0023; `bench/search.ts
 *   --index full`).
 * A hit's cosine is always computed from the stored full vector.
 */
export const INDEX_KINDS = ["full", "half", "bit"] as const
export type IndexKind = typeof INDEX_KINDS[number]

export const HALF_EMBEDDING = "embedding::halfvec(384)"
export const BIT_EMBEDDING = "binary_quantize(embedding)::bit(384)"

/**
 * The index kind for a database, from its `version()`.
 *
 * Measured (2026-11-27, bench/search.ts --corpus, 100k passages of real MiniLM vectors, 2 cores):
 * - Postgres 15 + pgvector 0.8 (native, F16C): half precision against full: index 195 → 111 MB,
 *   build 43 → 39 s, search p50 25.3–25.5 → 19.2–20.2 ms, p99 49.3–53.6 → 47.7–48.0 ms, recall@10
 *   against the exact search unchanged at 0.976–0.981.
 * - PGlite (pgvector compiled to WebAssembly): half precision converts in software and lost
 *   (build 172 → 543 s, p50 27.3 → 33.4 ms). Sign bits: index 195 → 33 MB, build 191 → 71 s,
 *   the nearest 50 alone p50 10 → 5.5 ms. The size is what lets PGlite hold 1M passages: the
 *   full-precision graph (~2 GB there) does not fit the 512 MB build memory nor, beside the
 *   buffer cache, WebAssembly's address space.
 */
export const indexKindFor = (version: string): IndexKind => /wasm32|emscripten/iu.test(version) ? "bit" : "half"

/** The kind of an index definition (`pg_indexes.indexdef`). */
export const indexKindOf = (indexdef: string | undefined): IndexKind =>
  indexdef?.includes("binary_quantize") === true ? "bit" : indexdef?.includes("halfvec") === true ? "half" : "full"

/** The index's DDL. */
export const hnswIndexSql = (kind: IndexKind) =>
  kind === "half"
    ? `CREATE INDEX search_passages_embedding ON search_passages USING hnsw ((${HALF_EMBEDDING}) halfvec_cosine_ops) WITH (${HNSW_OPTIONS})`
    : kind === "bit"
    ? `CREATE INDEX search_passages_embedding ON search_passages USING hnsw ((${BIT_EMBEDDING}) bit_hamming_ops) WITH (${HNSW_OPTIONS})`
    : `CREATE INDEX search_passages_embedding ON search_passages USING hnsw (embedding vector_cosine_ops) WITH (${HNSW_OPTIONS})`

/**
 * The vector list's ORDER BY for the index: its own expression to the query's vector (a
 * pgvector literal), so the planner walks the index. A `bit` walk orders by Hamming distance
 * only: its caller takes `hnsw.ef_search` rows and orders them by cosine.
 */
export const nearestTo = (sql: SqlClient.SqlClient, kind: IndexKind, literal: string) =>
  kind === "half"
    ? sql`${sql.literal(HALF_EMBEDDING)} <=> ${literal}::halfvec(384)`
    : kind === "bit"
    ? sql`${sql.literal(BIT_EMBEDDING)} <~> binary_quantize(${literal}::vector)::bit(384)`
    : sql`embedding <=> ${literal}::vector`

/** The query's full-precision cosine to a row, as `cosine` (a pgvector literal). */
export const cosineTo = (sql: SqlClient.SqlClient, literal: string) => sql`1 - (embedding <=> ${literal}::vector) AS cosine`

/**
 * The `depth` passages nearest the query (a pgvector literal) through the index, among those
 * `where` keeps: the `select` columns and `cosine` (full precision). A `bit` walk takes `pool`
 * rows (the `hnsw.ef_search` in force) by Hamming distance and keeps the best `depth` by cosine,
 * then id; the other kinds come in the walk's order. Run it where `hnsw.ef_search` (and the
 * iterative scan, for a filtered walk) are set.
 */
export const nearestRows = (
  sql: SqlClient.SqlClient,
  kind: IndexKind,
  options: {
    readonly literal: string
    readonly select: Statement.Fragment
    readonly where: Statement.Fragment
    readonly depth: number
    readonly pool: number
  }
) => {
  const { depth, literal, pool, select, where } = options
  const cosine = cosineTo(sql, literal)
  return kind === "bit"
    ? sql`WITH near AS MATERIALIZED (
        SELECT id, ${cosine} FROM search_passages WHERE ${where}
        ORDER BY ${nearestTo(sql, kind, literal)} LIMIT ${Math.max(depth, pool)}
      ), best AS (SELECT id, cosine FROM near ORDER BY cosine DESC, id LIMIT ${depth})
      SELECT ${select}, best.cosine FROM best JOIN search_passages USING (id) ORDER BY best.cosine DESC, id`
    : sql`SELECT ${select}, ${cosine} FROM search_passages WHERE ${where}
      ORDER BY ${nearestTo(sql, kind, literal)} LIMIT ${depth}`
}
