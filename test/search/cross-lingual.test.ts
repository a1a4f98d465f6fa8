/**
 * Questions in one language about recordings in another (issue 24), on the quality library of
 * library-quality.test.ts with Apertium translating the question (and, for an English question,
 * the Spanish hits back): Spanish paraphrases of the English cases find the English moment,
 * English questions find the Spanish market recording, and questions the library cannot answer,
 * in either language, still get no hit.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { PostgresSearchBackend } from "../../search/PostgresSearchBackend.ts"
import { QueryTranslator } from "../../search/QueryTranslator.ts"
import { SearchBackend } from "../../search/SearchBackend.ts"
import { ALWAYS_NAMED_PASSAGES, languageScope, NAMED_LANGUAGE, SearchIndex } from "../../search/SearchIndex.ts"
import { defaultMinRelevance } from "../../src/contract/api/SearchApi.ts"
import { apertiumDir, apertiumRuns } from "../support/apertium.ts"
import { type Case, cases, indexQualityLibrary, qualityLibrary, recordingsSaying, unanswerable } from "./library.ts"
import { embedderLayer, testDatabase } from "./support.ts"

/** The Spanish wording of each English case (bench/multilingual's pairs), and the reverse. */
const spanish: Readonly<Record<string, string>> = {
  "when is the library open": "¿Cuándo está abierta la biblioteca?",
  "who is building wind turbines": "¿Quién está construyendo aerogeneradores?",
  "what did they decide about hiring": "¿Qué decidieron sobre las contrataciones?",
  "how fast is the shoreline retreating each year": "¿Cuántos metros de acantilado pierde la costa cada año?",
  "what is the price of building barriers against the ocean": "¿Cuánto cuesta construir muros contra el mar?",
  "who plants vegetation on the sandy hills every weekend": "¿Quién planta vegetación en las dunas cada fin de semana?",
  "who is the scientist on the show": "¿Quién es el científico del programa?",
  "how much land can a single bad night take away": "¿Cuánta tierra puede llevarse una sola mala noche?",
  "should I expect a downpour this evening": "¿Va a llover mucho esta noche?",
  "what has to change in the agreement before signing": "¿Qué hay que cambiar en el acuerdo antes de firmarlo?",
  "what keeps community journalism going": "¿Qué mantiene vivo el periodismo local?",
  "¿Qué día abre el mercado?": "what day does the market open",
  "¿Dónde puedo comprar verduras frescas de la zona?": "where can I buy fresh local vegetables"
}
const unanswerableOther: ReadonlyArray<string> = [
  "¿Por qué se desplomó la bolsa de Tokio?",
  "¿Quién ganó el mundial de fútbol de 1998?",
  "¿Cómo cambio la contraseña del router?",
  "¿Cuál es la receta del pastel de chocolate?",
  "¿Cuándo se construyó la Torre Eiffel?",
  "what is the capital of Australia"
]

/** Measured with Apertium 3.8.3 / apertium-eng-spa 0.8.1 (Debian bookworm): 8 of 11; without translation 0 of 11. */
const SPANISH_ABOUT_ENGLISH = 8
/**
 * Measured: 9 of 12 get no hit. "chocolate cake" meets the lemon cake recipe in both languages
 * (in Spanish only through its translation: untranslated, 10 of 12), and "¿Quién ganó el mundial
 * de fútbol de 1998?" meets the Spanish football decoy's "El entrenador dijo…" (0.585, the same
 * untranslated: MiniLM places Spanish sentences close).
 */
const NO_HIT_EITHER_LANGUAGE = 9

const accountId = randomUUID()
const layer = SearchIndex.layer.pipe(
  Layer.provide(PostgresSearchBackend.layer()),
  Layer.provideMerge(QueryTranslator.layer({ dir: apertiumDir })),
  Layer.provideMerge(embedderLayer),
  Layer.provideMerge(testDatabase("search-cross-lingual"))
)
/** The same search without a translator, over the same database. */
const untranslated = Layer.fresh(SearchIndex.layer).pipe(
  Layer.provide(Layer.fresh(PostgresSearchBackend.layer())),
  Layer.provide(QueryTranslator.layerNone)
)

describe("cross-lingual search", () => {
  it("searches a language's recordings by name while they are few passages or a small part of the library", () => {
    const few = { jobIds: ["a", "b"], more: false, passages: ALWAYS_NAMED_PASSAGES }
    const mid = { jobIds: ["a", "b"], more: false, passages: ALWAYS_NAMED_PASSAGES + 1 }
    const many = { jobIds: ["x"], more: true, passages: NAMED_LANGUAGE.passages + 1 }
    expect(languageScope(few, few, undefined)).toEqual(["a", "b"])
    expect(languageScope(few, few, ["b", "c"])).toEqual(["b"])
    // Most of the library: walked with the language as a filter, within the request's jobs.
    expect(languageScope(mid, few, undefined)).toBeUndefined()
    expect(languageScope(mid, few, ["b", "c"])).toEqual(["b", "c"])
    expect(languageScope(many, few, undefined)).toBeUndefined()
    // A small part of a large library: ranked exactly by name.
    expect(languageScope(mid, many, undefined)).toEqual(["a", "b"])
  })

  if (!apertiumRuns("cross-lingual search")) return
  it.layer(layer, { timeout: 300_000 })((it) => {
    const ids = new Map<string, string>()
    const spanishAboutEnglish = cases.filter((c) => !c.q.startsWith("¿"))
    /** Whether the question's right moment is the first hit and clears the default threshold. */
    const foundFirst = (index: SearchIndex["Service"], q: string, c: Case) =>
      Effect.map(index.search({ accountId, q, limit: 5, minRelevance: defaultMinRelevance }), (hits) => {
        const top = hits[0]
        return top !== undefined && recordingsSaying(c.recording).includes(ids.get(top.job_id)!) && top.text.includes(c.moment)
      })

    /** The cases whose other-language wording the search without a translator finds first. */
    const foundUntranslated = (translating: SearchIndex["Service"], among: ReadonlyArray<Case>) =>
      Effect.gen(function*() {
        const plain = yield* SearchIndex
        expect(plain).not.toBe(translating)
        return yield* Effect.filter(among, (c) => foundFirst(plain, spanish[c.q]!, c))
      }).pipe(Effect.provide(untranslated))

    it.effect("indexes the quality library (English and Spanish recordings)", () =>
      Effect.gen(function*() {
        const index = yield* SearchIndex
        for (const [jobId, filename] of yield* indexQualityLibrary(index.indexJob, accountId)) ids.set(jobId, filename)
        expect(ids.size).toBe(qualityLibrary.length)
      }))

    it.effect("knows which languages an account's library holds", () =>
      Effect.gen(function*() {
        const backend = yield* SearchBackend
        const spanishJobs = Array.from(ids).filter(([, filename]) => qualityLibrary.find((i) => i.filename === filename)!.language === "es")
        const es = yield* backend.languageJobs(accountId, "es", { jobs: 10, passages: 100_000 })
        expect(es.more).toBe(false)
        expect([...es.jobIds].sort()).toEqual(spanishJobs.map(([id]) => id).sort())
        const sql = yield* SqlClient.SqlClient
        const [stored] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM search_passages
          WHERE account_id = ${accountId} AND language = 'es'`
        expect(stored!.n).toBeGreaterThan(1)
        expect(es.passages).toBe(stored!.n)
        // Few jobs holding more passages than the bound: listed, `more`, counted to the bound + 1.
        expect(yield* backend.languageJobs(accountId, "es", { jobs: 10, passages: stored!.n - 1 }))
          .toEqual({ jobIds: es.jobIds, more: true, passages: stored!.n })
        // Listed up to the bound, and `more` says there are others.
        const en = yield* backend.languageJobs(accountId, "en", { jobs: 3, passages: 100_000 })
        expect(en.jobIds.length).toBe(3)
        expect(en.more).toBe(true)
        expect(new Set(en.jobIds).size).toBe(3)
        expect(yield* backend.languageJobs(accountId, "fr", { jobs: 10, passages: 10 })).toEqual({ jobIds: [], more: false, passages: 0 })
        expect(yield* backend.languageJobs(randomUUID(), "en", { jobs: 10, passages: 10 })).toEqual({ jobIds: [], more: false, passages: 0 })
      }).pipe(Effect.provide(PostgresSearchBackend.layer())))

    it.effect(`Spanish questions about English recordings find the moment first (${SPANISH_ABOUT_ENGLISH} of ${spanishAboutEnglish.length}; none untranslated)`, () =>
      Effect.gen(function*() {
        const index = yield* SearchIndex
        const found = yield* Effect.filter(spanishAboutEnglish, (c) => foundFirst(index, spanish[c.q]!, c))
        expect(found.length, found.map((c) => spanish[c.q]).join(" / ")).toBeGreaterThanOrEqual(SPANISH_ABOUT_ENGLISH)
        // The cliff question shares no word with its answer: only its translation finds it.
        expect(found.map((c) => c.q)).toContain("how fast is the shoreline retreating each year")
        expect((yield* foundUntranslated(index, spanishAboutEnglish)).length).toBe(0)
      }))

    it.effect("English questions about the Spanish recording find it first (2 of 2; none untranslated)", () =>
      Effect.gen(function*() {
        const index = yield* SearchIndex
        const englishAboutSpanish = cases.filter((c) => c.q.startsWith("¿"))
        expect(englishAboutSpanish.length).toBe(2)
        for (const c of englishAboutSpanish) expect(yield* foundFirst(index, spanish[c.q]!, c), spanish[c.q]).toBe(true)
        // Untranslated, "what day does the market open" meets "Marketing will move…" first.
        expect((yield* foundUntranslated(index, englishAboutSpanish)).length).toBe(0)
      }))

    it.effect("questions in a recording's own language are answered as before, the right moment first", () =>
      Effect.gen(function*() {
        const index = yield* SearchIndex
        for (const c of cases) expect(yield* foundFirst(index, c.q, c), c.q).toBe(true)
      }))

    it.effect(`questions the library cannot answer, in either language, get no hit (at least ${NO_HIT_EITHER_LANGUAGE} of 12)`, () =>
      Effect.gen(function*() {
        const index = yield* SearchIndex
        const questions = [...unanswerable, ...unanswerableOther]
        const answered = yield* Effect.filter(questions, (q) =>
          Effect.map(index.search({ accountId, q, limit: 5, minRelevance: defaultMinRelevance }), (hits) => hits.length > 0))
        expect(questions.length - answered.length, answered.join(" / ")).toBeGreaterThanOrEqual(NO_HIT_EITHER_LANGUAGE)
        expect(yield* index.search({ accountId, q: "¿Por qué se desplomó la bolsa de Tokio?", minRelevance: defaultMinRelevance })).toEqual([])
      }))
  })
})
