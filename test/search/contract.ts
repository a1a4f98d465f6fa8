/**
 * The behaviour every search backend must show, on the same fixtures with the same
 * expected top hits. Each backend's test file calls `searchContract` with its layer.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { SearchIndex } from "../../search/SearchIndex.ts"
import { transcriptOf } from "./support.ts"

const accountA = randomUUID()
const accountB = randomUUID()
const budgetJob = randomUUID()
const libraryJob = randomUUID()
const spanishJob = randomUUID()
const otherLibraryJob = randomUUID()

const budget = transcriptOf([
  { text: "Good morning everyone, thanks for coming in so early.", speaker: "SPEAKER_00" },
  { text: "Today we will review the quarterly budget line by line.", speaker: "SPEAKER_00" },
  { text: "Travel spending went up by twelve percent since spring.", speaker: "SPEAKER_01" },
  { text: "Software licences stayed flat, which is good news.", speaker: "SPEAKER_01" },
  { text: "Then we need to talk about the support team.", speaker: "SPEAKER_00" },
  { text: "They answered twice as many tickets this quarter.", speaker: "SPEAKER_01" },
  { text: "So we decided to hire two more support engineers in March.", speaker: "SPEAKER_00" },
  { text: "The recruiter will post both openings next week.", speaker: "SPEAKER_00" },
  { text: "Any questions before we close the meeting?", speaker: "SPEAKER_00" },
  { text: "None from me, thanks everyone.", speaker: "SPEAKER_01" }
])
const library = transcriptOf([
  { text: "Please remember to save your work often." },
  { text: "The printers on the second floor are out of toner." },
  { text: "The library closes at nine in the evening." },
  { text: "The reading room opens again at seven in the morning." }
])
const spanish = transcriptOf([
  { text: "El mercado abre todos los sábados por la mañana." },
  { text: "Vende frutas y verduras de la región." }
], "es")

export const searchContract = <E>(name: string, layer: Layer.Layer<SearchIndex, E>) =>
  describe(`SearchIndex contract (${name})`, () => {
    it.layer(layer, { timeout: 300_000 })((it) => {
      it.effect("indexes jobs and counts their passages", () =>
        Effect.gen(function*() {
          const index = yield* SearchIndex
          const created_at = new Date("2026-01-10T10:00:00Z")
          expect(yield* index.indexJob(accountA, budgetJob, { filename: "budget.wav", language: "en", created_at }, budget))
            .toBeGreaterThan(budget.segments.length)
          yield* index.indexJob(accountA, libraryJob, { filename: "library.wav", language: "en", created_at: new Date("2026-02-10T10:00:00Z") }, library)
          yield* index.indexJob(accountA, spanishJob, { filename: "mercado.wav", language: "es", created_at }, spanish)
          yield* index.indexJob(accountB, otherLibraryJob, { filename: "b-library.wav", language: "en", created_at }, library)
        }))

      it.effect("finds the moment that answers a paraphrased question, with its own times", () =>
        Effect.gen(function*() {
          const index = yield* SearchIndex
          const [top] = yield* index.search({ accountId: accountA, q: "when can I get into the library in the morning" })
          expect(top!.job_id).toBe(libraryJob)
          expect(top!.filename).toBe("library.wav")
          expect(top!.text).toMatch(/opens again at seven|closes at nine/)
          const segment = library.segments.find((s) => s.text === top!.text)!
          expect([top!.start, top!.end]).toEqual([segment.start, segment.end])

          const [hiring] = yield* index.search({ accountId: accountA, q: "what did they decide about hiring" })
          expect(hiring!.job_id).toBe(budgetJob)
          expect(hiring!.text).toContain("hire two more support engineers")
          expect(hiring!.speaker).toBe("SPEAKER_00")
        }))

      it.effect("marks the question's words in a lexical hit", () =>
        Effect.gen(function*() {
          const index = yield* SearchIndex
          const [top] = yield* index.search({ accountId: accountA, q: "travel spending" })
          expect(top!.text).toContain("Travel spending")
          expect(top!.highlights.map(([a, b]) => top!.text.slice(a, b))).toEqual(["Travel", "spending"])
        }))

      it.effect("finds the Spanish recording with a Spanish question", () =>
        Effect.gen(function*() {
          const index = yield* SearchIndex
          const [top] = yield* index.search({ accountId: accountA, q: "¿Qué día abre el mercado?" })
          expect(top!.job_id).toBe(spanishJob)
          const onlyEs = yield* index.search({ accountId: accountA, q: "library", language: "es" })
          expect(new Set(onlyEs.map((h) => h.job_id))).toEqual(new Set(onlyEs.length === 0 ? [] : [spanishJob]))
        }))

      it.effect("never crosses accounts", () =>
        Effect.gen(function*() {
          const index = yield* SearchIndex
          const a = yield* index.search({ accountId: accountA, q: "library closes at nine", limit: 50 })
          expect(a.length).toBeGreaterThan(0)
          expect(a.some((h) => h.job_id === otherLibraryJob)).toBe(false)
          const b = yield* index.search({ accountId: accountB, q: "quarterly budget and hiring", limit: 50 })
          expect(new Set(b.map((h) => h.job_id))).toEqual(new Set([otherLibraryJob]))
          // Naming another account's job does not reach it.
          expect(yield* index.search({ accountId: accountA, q: "library", jobIds: [otherLibraryJob] })).toEqual([])
          expect(yield* index.search({ accountId: randomUUID(), q: "library" })).toEqual([])
        }))

      it.effect("filters by job, language and creation time", () =>
        Effect.gen(function*() {
          const index = yield* SearchIndex
          const inBudget = yield* index.search({ accountId: accountA, q: "library", jobIds: [budgetJob], limit: 50 })
          expect(inBudget.length).toBeGreaterThan(0)
          expect(inBudget.every((h) => h.job_id === budgetJob)).toBe(true)
          const recent = yield* index.search({ accountId: accountA, q: "library", since: new Date("2026-02-01T00:00:00Z"), limit: 50 })
          expect(new Set(recent.map((h) => h.job_id))).toEqual(new Set([libraryJob]))
          const older = yield* index.search({ accountId: accountA, q: "library", until: new Date("2026-02-01T00:00:00Z"), limit: 50 })
          expect(older.some((h) => h.job_id === libraryJob)).toBe(false)
          const limited = yield* index.search({ accountId: accountA, q: "budget", limit: 1 })
          expect(limited.length).toBe(1)
          // Excluded jobs (the caller's locked ones) are left out by the backend itself.
          const library = yield* index.search({ accountId: accountA, q: "library", limit: 50 })
          expect(library.some((h) => h.job_id === libraryJob)).toBe(true)
          const without = yield* index.search({ accountId: accountA, q: "library", excludeJobIds: [libraryJob], limit: 50 })
          expect(without.length).toBeGreaterThan(0)
          expect(without.some((h) => h.job_id === libraryJob)).toBe(false)
        }))

      it.effect("re-indexing replaces a job's passages and removing drops them", () =>
        Effect.gen(function*() {
          const index = yield* SearchIndex
          const corrected = transcriptOf([{ text: "The archive closes at ten at night." }, { text: "Bring your own lamp." }])
          yield* index.indexJob(accountA, libraryJob, { filename: "library.wav", language: "en", created_at: new Date("2026-02-10T10:00:00Z") }, corrected)
          const hits = yield* index.search({ accountId: accountA, q: "toner printers", jobIds: [libraryJob], limit: 50 })
          expect(hits.some((h) => h.text.includes("toner"))).toBe(false)
          expect(hits.some((h) => h.text.includes("archive"))).toBe(true)
          yield* index.removeJob(libraryJob)
          expect(yield* index.search({ accountId: accountA, q: "archive", jobIds: [libraryJob] })).toEqual([])
          // The other account's copy is untouched.
          expect((yield* index.search({ accountId: accountB, q: "toner" })).length).toBeGreaterThan(0)
        }))

      it.effect("indexing a transcript without speech leaves the job with no passages", () =>
        Effect.gen(function*() {
          const index = yield* SearchIndex
          const silent = transcriptOf([])
          expect(yield* index.indexJob(accountA, budgetJob, { filename: "budget.wav", language: "en", created_at: new Date("2026-01-10T10:00:00Z") }, silent)).toBe(0)
          expect(yield* index.search({ accountId: accountA, q: "quarterly budget", jobIds: [budgetJob] })).toEqual([])
        }))

      it.effect("refuses an empty or overlong question and a bad limit", () =>
        Effect.gen(function*() {
          const index = yield* SearchIndex
          for (const request of [{ q: "   " }, { q: "x".repeat(501) }, { q: "ok", limit: 0 }, { q: "ok", limit: 51 }]) {
            const error = yield* Effect.flip(index.search({ accountId: accountA, ...request }))
            expect(error._tag).toBe("InvalidSearchQuery")
          }
        }))
    })
  })
