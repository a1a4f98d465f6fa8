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
import { qualityLibrary, recordingsSaying } from "./library.ts"
import { embedderLayer, testDatabase } from "./support.ts"

interface Case {
  readonly q: string
  /** A sentence of the target recording: every recording saying it counts as right. */
  readonly recording: string
  /** The top hit's text must contain this (the moment, not just the recording). */
  readonly moment: string
  /** For timed turns: the moment's own times. */
  readonly times?: readonly [number, number]
}

export const cases: ReadonlyArray<Case> = [
  { q: "when is the library open", recording: "The library closes at nine", moment: "reading room opens again at seven" },
  { q: "who is building wind turbines", recording: "three tall windmills", moment: "windmills on the ridge" },
  { q: "what did they decide about hiring", recording: "new hiring plan", moment: "decide on the new hiring plan" },
  { q: "how fast is the shoreline retreating each year", recording: "Welcome back to Coastline", moment: "two meters of cliff every year", times: [18.93, 28.0] },
  { q: "what is the price of building barriers against the ocean", recording: "Welcome back to Coastline", moment: "twenty thousand dollars per meter", times: [32.9, 40.73] },
  { q: "who plants vegetation on the sandy hills every weekend", recording: "Welcome back to Coastline", moment: "volunteers plant dune grass", times: [47.83, 57.41] },
  { q: "who is the scientist on the show", recording: "Welcome back to Coastline", moment: "a geologist who studies coastal erosion", times: [0.3, 10.04] },
  { q: "how much land can a single bad night take away", recording: "Welcome back to Coastline", moment: "ten meters in a single night", times: [18.93, 28.0] },
  { q: "should I expect a downpour this evening", recording: "heavy rain across the northern valleys", moment: "heavy rain" },
  { q: "what has to change in the agreement before signing", recording: "draft contract", moment: "payment terms need another look" },
  { q: "what keeps community journalism going", recording: "rebuilding their local newspapers", moment: "local newspapers" },
  { q: "¿Qué día abre el mercado?", recording: "El mercado abre", moment: "El mercado abre todos los sábados" },
  { q: "¿Dónde puedo comprar verduras frescas de la zona?", recording: "El mercado abre", moment: "verduras" }
]

/**
 * Questions the library cannot answer: with the default `min_relevance` they get no hit.
 * Measured: 5 of 6 (0.83). The miss is kept in the list, so the rate is what is held:
 * "chocolate cake" meets a lemon cake recipe at cosine 0.44, as close as right answers are.
 */
export const unanswerable: ReadonlyArray<string> = [
  "stock market crash in Tokyo",
  "who won the football world cup in 1998",
  "how do I reset my router password",
  "what is the recipe for chocolate cake",
  "when was the Eiffel Tower built",
  "¿Cuál es la capital de Australia?"
]
const NO_HIT_RATE = 5 / 6

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
        for (const item of qualityLibrary) {
          const jobId = randomUUID()
          ids.set(jobId, item.filename)
          yield* index.indexJob(accountId, jobId, { filename: item.filename, language: item.language, created_at: new Date() }, item.transcript)
        }
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
