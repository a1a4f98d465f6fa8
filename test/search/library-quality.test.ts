/**
 * Library search quality on the Postgres backend (PGlite): questions phrased without the
 * transcript's words find the right recording and the right moment first, in a library
 * of every shared/media transcript plus decoys on neighbouring topics. The Spanish
 * recording is found by Spanish questions and does not disturb English ones. Right top hits
 * clear the default `min_relevance`; questions the library cannot answer get no hit.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { PostgresSearchBackend } from "../../search/PostgresSearchBackend.ts"
import { SearchIndex } from "../../search/SearchIndex.ts"
import { defaultMinRelevance } from "../../src/contract/api/SearchApi.ts"
import { cases, indexQualityLibrary, NO_HIT_RATE, qualityLibrary, recordingsSaying, unanswerable } from "./library.ts"
import { embedderLayer, testDatabase } from "./support.ts"


const accountId = randomUUID()
// The embedder and the database stay in the context: the exact reference below is built on them.
const layer = SearchIndex.layer.pipe(
  Layer.provide(PostgresSearchBackend.layer()),
  Layer.provideMerge(embedderLayer),
  Layer.provideMerge(testDatabase("search-quality"))
)
/** The same search over the exact backend (every candidate ranked); fresh, or memoisation hands back the fast one. */
const exactReference = Layer.fresh(SearchIndex.layer).pipe(Layer.provide(Layer.fresh(PostgresSearchBackend.layer({ exact: true }))))

describe("library search quality", () => {
  it.layer(layer, { timeout: 300_000 })((it) => {
    const ids = new Map<string, string>()

    it.effect("indexes every shared/media transcript and the decoys", () =>
      Effect.gen(function*() {
        const index = yield* SearchIndex
        for (const [jobId, filename] of yield* indexQualityLibrary(index.indexJob, accountId)) ids.set(jobId, filename)
        expect(ids.size).toBe(qualityLibrary.length)
      }))

    for (const c of cases) {
      it.effect(`"${c.q}" → ${c.moment}`, () =>
        Effect.gen(function*() {
          const index = yield* SearchIndex
          // Hit@1 with the default threshold: the right moment ranks first and clears it.
          const hits = yield* index.search({ accountId, q: c.q, limit: 5, minRelevance: defaultMinRelevance })
          const top = hits[0]!
          expect(top.relevance).toBeGreaterThanOrEqual(defaultMinRelevance)
          const right = recordingsSaying(c.recording)
          expect(right.length).toBeGreaterThan(0)
          expect(right).toContain(ids.get(top.job_id))
          expect(top.filename).toBe(ids.get(top.job_id))
          expect(top.text).toContain(c.moment)
          if (c.times !== undefined) {
            expect(top.start).toBeCloseTo(c.times[0], 2)
            expect(top.end).toBeCloseTo(c.times[1], 2)
          }
        }))
    }

    it.effect(`unanswerable questions get no hit at the default min_relevance (at least ${NO_HIT_RATE.toFixed(2)})`, () =>
      Effect.gen(function*() {
        const index = yield* SearchIndex
        let none = 0
        for (const q of unanswerable) {
          const all = yield* index.search({ accountId, q, limit: 5 })
          expect(all.length, q).toBeGreaterThan(0) // the ranking alone always has something
          const hits = yield* index.search({ accountId, q, limit: 5, minRelevance: defaultMinRelevance })
          if (hits.length === 0) none++
        }
        expect(none / unanswerable.length).toBeGreaterThanOrEqual(NO_HIT_RATE)
        // The issue's own example must never return a hit.
        expect(yield* index.search({ accountId, q: "stock market crash in Tokyo", minRelevance: defaultMinRelevance })).toEqual([])
      }))

    // The approximations (HNSW's ef_search, the full-text list's LEXICAL_RANKED sample) only
    // bind on a large library (bench/search.ts measures recall@10 there); on this one the search
    // must return exactly the reference's hits, in its order, or the fast path has drifted from
    // the rule the reference ranks by.
    it.effect("returns the exact reference's hits on a library under the approximations' bounds", () =>
      Effect.gen(function*() {
        const index = yield* SearchIndex
        const questions = [...cases.map((c) => c.q), ...unanswerable, "library", "weather"]
        const fast = yield* Effect.forEach(questions, (q) => index.search({ accountId, q, limit: 10 }))
        const exact = yield* Effect.gen(function*() {
          const reference = yield* SearchIndex
          expect(reference).not.toBe(index)
          return yield* Effect.forEach(questions, (q) => reference.search({ accountId, q, limit: 10 }))
        }).pipe(Effect.provide(exactReference))
        const keys = (hits: ReadonlyArray<{ job_id: string; start: number; end: number }>) => hits.map((h) => `${h.job_id}@${h.start}-${h.end}`)
        questions.forEach((q, i) => {
          expect(exact[i]!.length, q).toBeGreaterThan(0)
          expect(keys(fast[i]!), q).toEqual(keys(exact[i]!))
        })
      }))

    it.effect("an English question never ranks the Spanish recordings above an English answer", () =>
      Effect.gen(function*() {
        const index = yield* SearchIndex
        for (const c of cases.filter((c) => !c.q.startsWith("¿"))) {
          const hits = yield* index.search({ accountId, q: c.q, limit: 3 })
          const spanish = hits.filter((h) => ["l01_spanish.wav", "d06_partido.wav"].includes(ids.get(h.job_id)!))
          expect(spanish.length, c.q).toBe(0)
        }
      }))
  })
})
