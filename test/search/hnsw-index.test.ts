/**
 * The passages' HNSW index as the migrations leave it (search/HnswIndex.ts, migrations 0023–0025):
 * over half-precision embeddings on a Postgres server, over their sign bits on PGlite; walked by
 * the backend's ORDER BY for that index, and returning (re-ranked by cosine for sign bits) the
 * nearest passages of the full-precision order. On a server without pgvector there is no index
 * (the exact-scan layout).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, References } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { type IndexKind, indexKindFor, indexKindOf, nearestRows, nearestTo } from "../../search/HnswIndex.ts"
import { embeddingLayout, rebuildAtMigration } from "../../search/PgvectorLayout.ts"
import { BIT_EF_SEARCH, EF_SEARCH, LARGE_BIT_EF_SEARCH, LARGE_EF_SEARCH, LARGE_LIBRARY, setEfSearch } from "../../search/PostgresSearchBackend.ts"
import { onPostgres } from "../support/database.ts"
import { testDatabase } from "./support.ts"

const ROWS = 2000
const DIMENSIONS = 384

/**
 * Deterministic unit vectors (a linear congruential generator) in 40 clusters, as pgvector
 * literals: embeddings of text sit in topics, and a sign-bit walk is only meant to find a
 * neighbourhood that the full-precision cosine then orders (on uniform random vectors nothing
 * is near anything, and 384 sign bits barely order them).
 */
const clusteredVectors = (count: number, seed: number): Array<string> => {
  let state = 12_345
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    return state / 2_147_483_648 - 0.5
  }
  const unit = (v: Array<number>) => {
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0))
    return v.map((x) => x / norm)
  }
  const centres = Array.from({ length: 40 }, () => unit(Array.from({ length: DIMENSIONS }, next)))
  state = seed
  return Array.from({ length: count }, (_, i) => {
    const centre = centres[i % centres.length]!
    // Noise of about the centre's length: members of a cluster at cosine ~0.5.
    return `[${unit(centre.map((c) => c + 0.18 * next())).join(",")}]`
  })
}

describe("passages' HNSW index", () => {
  it.layer(testDatabase("hnsw-index"), { timeout: 300_000 })((it) => {
    const account = randomUUID()

    it.effect("is built over half precision on a server, over sign bits on PGlite, with the build options", () =>
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
        expect(indexKindFor(server?.version ?? "")).toBe(onPostgres ? "half" : "bit")
        expect(indexKindOf(def)).toBe(onPostgres ? "half" : "bit")
        if (onPostgres) {
          expect(def).toMatch(/USING hnsw \(\(\(?embedding\)?::halfvec\(384\)\)\s+halfvec_cosine_ops\)/u)
        } else {
          expect(def).toMatch(/USING hnsw \(\(\(?binary_quantize\(embedding\)\)?::bit\(384\)\)\s+bit_hamming_ops\)/u)
        }
        expect(def).toContain("ef_construction='128'")
      }))

    it.effect("is walked by the backend's order and finds the full-precision nearest passages", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const layout = yield* embeddingLayout
        if (layout.column !== "vector") return
        const kind = indexKindOf(layout.indexdef)
        const job = randomUUID()
        const vectors = clusteredVectors(ROWS, 7)
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
        const nearest = (query: string) => nearestTo(sql, kind, query)
        const queries = clusteredVectors(20, 11)
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
            // The backend's rows: a sign-bit walk's 400 nearest re-ranked by cosine.
            return yield* nearestRows(sql, kind, {
              literal: query,
              select: sql.literal("id::text AS id"),
              where: sql`account_id = ${account}`,
              depth: 10,
              pool: 400
            })
          }))
          // `+ 0` keeps the planner off the index: the exact order at full precision.
          const exact = yield* sql<{ id: string }>`SELECT id::text AS id FROM search_passages WHERE account_id = ${account}
            ORDER BY (embedding <=> ${query}::vector) + 0 LIMIT 10`
          const ids = new Set(approximate.map((row) => row.id))
          kept += exact.filter((row) => ids.has(row.id)).length
        }
        // Half precision moves a cosine by ~1e-4: only a near tie at the tenth place may swap.
        // Sign bits find the query's cluster, and the cosine orders it.
        expect(kept).toBeGreaterThanOrEqual(196)
      }).pipe(Effect.orDie))

    it.effect("is walked with a wider ef_search from LARGE_LIBRARY passages on", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const efAt = (reltuples: number, kind: IndexKind, override?: number) =>
          sql.withTransaction(Effect.gen(function*() {
            // The planner's row count, as ANALYZE leaves it on a library of that size.
            yield* sql`UPDATE pg_class SET reltuples = ${reltuples} WHERE oid = 'search_passages'::regclass`
            const set = yield* setEfSearch(sql, kind, override)
            const [shown] = yield* sql<{ ef: string }>`SELECT current_setting('hnsw.ef_search') AS ef`
            expect(shown?.ef).toBe(String(set))
            return set
          }))
        expect(yield* efAt(LARGE_LIBRARY - 1, "half")).toBe(EF_SEARCH)
        expect(yield* efAt(LARGE_LIBRARY, "half")).toBe(LARGE_EF_SEARCH)
        expect(yield* efAt(2 * LARGE_LIBRARY, "full")).toBe(LARGE_EF_SEARCH)
        expect(yield* efAt(10, "bit")).toBe(BIT_EF_SEARCH)
        expect(yield* efAt(LARGE_LIBRARY, "bit")).toBe(LARGE_BIT_EF_SEARCH)
        expect(yield* efAt(2 * LARGE_LIBRARY, "half", 123)).toBe(123)
        yield* sql`ANALYZE search_passages`
      }).pipe(Effect.orDie))

    it.effect("is rebuilt by a migration with a log line before and after on a large library only", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const layout = yield* embeddingLayout
        if (layout.column !== "vector") return
        const kind = indexKindOf(layout.indexdef)
        const [{ passages } = { passages: 0 }] = yield* sql<{ passages: number }>`SELECT count(*)::int AS passages FROM search_passages`
        expect(passages).toBeGreaterThan(0)
        const lines: Array<{ message: unknown; annotations: Record<string, unknown> }> = []
        const capture = Logger.layer([Logger.make(({ fiber, message }) => {
          lines.push({ message, annotations: { ...fiber.getRef(References.CurrentLogAnnotations) } })
        })])
        const rebuild = (announceFrom: number) =>
          sql.withTransaction(rebuildAtMigration(kind, announceFrom)).pipe(Effect.provide(capture))

        // A library under the threshold is rebuilt without a word (a new install's migrations).
        yield* rebuild(passages + 1)
        expect(lines).toEqual([])

        yield* rebuild(passages)
        expect(lines.map((line) => line.message)).toEqual([["rebuilding the search index before start"], ["search index rebuilt"]])
        expect(lines[0]!.annotations).toMatchObject({ passages, index: kind })
        expect(lines[0]!.annotations["expected_minutes"]).toBeGreaterThanOrEqual(1)
        expect(lines[1]!.annotations["seconds"]).toBeGreaterThanOrEqual(0)
        // The rebuilt index is the kind this database builds.
        expect(indexKindOf((yield* embeddingLayout).indexdef)).toBe(kind)
      }).pipe(Effect.orDie))
  })
})
