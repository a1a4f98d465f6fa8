/**
 * The passages' HNSW index as the migrations leave it (search/HnswIndex.ts, migrations 0023 and
 * 0024): over half-precision embeddings on a Postgres server, over the stored ones on PGlite;
 * walked by the backend's ORDER BY for that index, and returning the nearest passages of the
 * full-precision order. On a server without pgvector there is no index (the exact-scan layout).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { halfPrecisionFor, isHalfIndex, nearestTo } from "../../search/HnswIndex.ts"
import { embeddingLayout } from "../../search/PgvectorLayout.ts"
import { onPostgres } from "../support/database.ts"
import { testDatabase } from "./support.ts"

const ROWS = 600
const DIMENSIONS = 384

/** Deterministic pseudo-random unit vectors (a linear congruential generator), as pgvector literals. */
const unitVectors = (count: number, seed: number): Array<string> => {
  let state = seed
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    return state / 2_147_483_648 - 0.5
  }
  return Array.from({ length: count }, () => {
    const v = Array.from({ length: DIMENSIONS }, next)
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0))
    return `[${v.map((x) => x / norm).join(",")}]`
  })
}

describe("passages' HNSW index", () => {
  it.layer(testDatabase("hnsw-index"), { timeout: 300_000 })((it) => {
    const account = randomUUID()

    it.effect("is built over half precision on a server, as stored on PGlite, with the build options", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const layout = yield* embeddingLayout
        if (layout.column !== "vector") {
          // Only a server without pgvector has the exact-scan layout; PGlite always ships it.
          expect(onPostgres).toBe(true)
          return
        }
        const [server] = yield* sql<{ version: string }>`SELECT version() AS version`
        const def = layout.indexdef
        expect(halfPrecisionFor(server?.version ?? "")).toBe(onPostgres)
        if (onPostgres) {
          expect(def).toMatch(/USING hnsw \(\(\(?embedding\)?::halfvec\(384\)\)\s+halfvec_cosine_ops\)/u)
        } else {
          expect(def).toMatch(/USING hnsw \(embedding vector_cosine_ops\)/u)
        }
        expect(def).toContain("ef_construction='128'")
      }))

    it.effect("is walked by the backend's order and finds the full-precision nearest passages", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const layout = yield* embeddingLayout
        if (layout.column !== "vector") return
        const half = isHalfIndex(layout.indexdef)
        const job = randomUUID()
        const vectors = unitVectors(ROWS, 7)
        yield* sql`INSERT INTO search_passages ${
          sql.insert(vectors.map((embedding, i) => ({
            account_id: account,
            job_id: job,
            kind: "segment",
            start: i,
            end: i + 1,
            speaker: null,
            text: `passage ${i}`,
            moments: JSON.stringify([]),
            filename: null,
            language: "en",
            ts_config: "simple",
            created_at: new Date(),
            embedding
          })) as unknown as [Record<string, unknown>]
        )
        }`
        yield* sql`ANALYZE search_passages`

        // The backend's order for this index.
        const nearest = (query: string) => nearestTo(sql, half, query)
        const queries = unitVectors(20, 11)
        // With sorts priced out (a few hundred rows are cheaper to sort than to walk) the
        // planner takes the index if, and only if, the ORDER BY is the index's expression.
        const plan = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT set_config('enable_sort', 'off', true)`
          return yield* sql`EXPLAIN SELECT id FROM search_passages WHERE account_id = ${account}
            ORDER BY ${nearest(queries[0]!)} LIMIT 10`
        }))
        expect(plan.map((row) => Object.values(row)[0]).join("\n")).toContain("Index Scan using search_passages_embedding")

        let kept = 0
        for (const query of queries) {
          const approximate = yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`SELECT set_config('enable_sort', 'off', true), set_config('hnsw.ef_search', '400', true)`
            return yield* sql<{ id: string }>`SELECT id::text AS id FROM search_passages WHERE account_id = ${account}
              ORDER BY ${nearest(query)} LIMIT 10`
          }))
          // `+ 0` keeps the planner off the index: the exact order at full precision.
          const exact = yield* sql<{ id: string }>`SELECT id::text AS id FROM search_passages WHERE account_id = ${account}
            ORDER BY (embedding <=> ${query}::vector) + 0 LIMIT 10`
          const ids = new Set(approximate.map((row) => row.id))
          kept += exact.filter((row) => ids.has(row.id)).length
        }
        // Measured: 200 of 200 on PGlite (full precision), 199 on Postgres 15 (half). Half
        // precision moves a cosine by ~1e-4; only a near tie at the tenth place swaps.
        expect(kept).toBeGreaterThanOrEqual(196)
      }).pipe(Effect.orDie))
  })
})
