/**
 * The passages' HNSW index as the migrations build it (0023, 0024) and the Postgres backend
 * walks it: the backend's ORDER BY must be the index's own expression, or the planner sorts
 * the whole account's rows instead.
 */
import type { SqlClient } from "effect/sql"

/** pgvector's build options (its defaults are m 16, ef_construction 64; why 128: migration 0023). */
export const HNSW_OPTIONS = "m = 16, ef_construction = 128"

/**
 * What a server's index is built over since migration 0024: the stored `vector(384)` cast to
 * half precision; a hit's cosine is still computed from the stored full vector.
 */
export const HALF_EMBEDDING = "embedding::halfvec(384)"

/**
 * Whether the index is built over half precision, from the database's `version()`.
 *
 * Measured (2026-11-27, bench/search.ts --corpus, 100k passages of real MiniLM vectors,
 * 300 queries, 2 cores, recall@10 against the exact search unchanged at 0.976–0.981):
 * - Postgres 15 + pgvector 0.8 (native, F16C): index 195 → 111 MB, build 43 → 39 s, search
 *   p50 25.3–25.5 → 19.2–20.2 ms, p99 49.3–53.6 → 47.7–48.0 ms. Half precision.
 * - PGlite (pgvector compiled to WebAssembly, which converts half floats in software): build
 *   172 → 543 s, search p50 27.3 → 33.4 ms, p99 48.4 → 58.8 ms; the database process's RSS
 *   931 → 825 MB. The stored vectors stay the index's there.
 */
export const halfPrecisionFor = (version: string): boolean => !/wasm32|emscripten/iu.test(version)

/** Whether an index definition (`pg_indexes.indexdef`) is the half-precision one. */
export const isHalfIndex = (indexdef: string | undefined): boolean => indexdef?.includes("halfvec") ?? false

/** The index's DDL, over half-precision embeddings (0024) or the stored ones (0023). */
export const hnswIndexSql = (half: boolean) =>
  half
    ? `CREATE INDEX search_passages_embedding ON search_passages USING hnsw ((${HALF_EMBEDDING}) halfvec_cosine_ops) WITH (${HNSW_OPTIONS})`
    : `CREATE INDEX search_passages_embedding ON search_passages USING hnsw (embedding vector_cosine_ops) WITH (${HNSW_OPTIONS})`

/**
 * The vector list's ORDER BY for the index: its own expression (`half`, see `isHalfIndex`) to
 * the query's vector (a pgvector literal), so the planner walks the index.
 */
export const nearestTo = (sql: SqlClient.SqlClient, half: boolean, literal: string) =>
  half ? sql`${sql.literal(HALF_EMBEDDING)} <=> ${literal}::halfvec(384)` : sql`embedding <=> ${literal}::vector`
