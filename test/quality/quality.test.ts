/**
 * The quality set's figures held (issue 24, "Proof that stays"): the cached real-pipeline
 * transcripts of test/quality go through library search (PGlite), insights and clip
 * candidates with the real MiniLM weights, and every figure must stay at least where it was
 * measured (README "Insights", bench/README "quality"). A regression in moments, the
 * relevance threshold, summaries, topics, quotes or clip candidates fails here.
 * `npx node bench/quality.ts` prints the same figures with what missed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { PostgresSearchBackend } from "../../search/PostgresSearchBackend.ts"
import { SearchIndex } from "../../search/SearchIndex.ts"
import { Insights } from "../../services/insights/Insights.ts"
import { embedderLayer, testDatabase } from "../search/support.ts"
import { measureRecording, type RecordingResult, report, totals } from "./measure.ts"
import { opensBadly, qualitySet } from "./set.ts"

const layer = Layer.mergeAll(
  SearchIndex.layer.pipe(Layer.provide(PostgresSearchBackend.layer()), Layer.provide(testDatabase("quality-set"))),
  Insights.layer()
).pipe(Layer.provideMerge(embedderLayer))

/** Measured on 2026-11-26 (after the issue 24 insights work; key phrases after the tagger); the line the set must hold. */
const HELD = {
  /** 18 of 21 questions (19 with the search work in progress that day): the right moment first within its recording. */
  hitAt1: 18 / 21,
  mrr: 0.9,
  /** All 12 unanswerable questions get no hit at the default min_relevance. */
  noHitRate: 1,
  /** 26 of 35 annotated facts (26 of the 30 that whisper heard) in the summaries; 16 before this work. */
  factCoverage: 26 / 35,
  /**
   * 30 of 32 topics are annotated key phrases (0.47 before issue 24, 0.75 before the comma,
   * time-word and verb rules, 26/32 before the part-of-speech tagger); the two left are
   * mishearings ("real travel" for "rail travel", "main water" of "rainwater tank").
   */
  keyPhrasePrecision: 30 / 32,
  /** 65 of the 71 annotated key phrases the transcripts say are candidates (61 before the tagger). */
  candidateRecall: 65 / 71
}

describe("quality set (test/quality)", () => {
  it("the judge of openings flags a reaction, a bare answer and an answer to a question left out", () => {
    const transcript = {
      text: "",
      language: "en",
      duration: 10,
      speech_detected: true,
      segments: [
        { start: 0, end: 2, text: "How fast is the coast disappearing?", speaker: "A" },
        { start: 2, end: 5, text: "We lose two meters of cliff every year.", speaker: "B" },
        { start: 5, end: 6, text: "Never.", speaker: "B" }
      ]
    }
    assert.strictEqual(opensBadly(transcript, 2, "We lose two meters of cliff every year."), "opens on the answer to a question left out")
    assert.strictEqual(opensBadly(transcript, 5, "Never. It is too late."), "opens on a reaction")
    assert.strictEqual(opensBadly(transcript, 5, "Two meters. Every year."), "opens on a bare answer")
    assert.isUndefined(opensBadly(transcript, 0, "How fast is the coast disappearing? We lose two meters of cliff every year."))
  })

  it.layer(layer, { timeout: 120_000 })((it) => {
    it.effect("moments, no-hit on unanswerable questions, summary facts, key phrases and candidate openings hold", () =>
      Effect.gen(function*() {
        const results: Array<RecordingResult> = []
        for (const recording of qualitySet) results.push(yield* measureRecording(recording))
        console.log(report(results, false))
        const t = totals(results)
        assert.strictEqual(results.length, 6)
        assert.isAtLeast(t.hitAt1, HELD.hitAt1 - 1e-9)
        assert.isAtLeast(t.mrr, HELD.mrr - 0.005)
        assert.isAtLeast(t.noHitRate, HELD.noHitRate)
        assert.isAtLeast(t.factCoverage, HELD.factCoverage - 1e-9)
        assert.isAtLeast(t.keyPhrasePrecision, HELD.keyPhrasePrecision - 1e-9)
        assert.isAtLeast(t.candidateRecall, HELD.candidateRecall - 1e-9)
        // No quote and no clip candidate opens on a bare answer, a reaction, or an answer to a question it leaves out.
        assert.deepStrictEqual(results.flatMap((r) => [...r.quotes.bad, ...r.candidates.bad]), [])
        for (const [k, r] of results.entries()) {
          const transcript = qualitySet[k]!.transcript
          assert.isAbove(r.quotes.total + r.candidates.total, 0, r.name)
          // Every candidate says why it was chosen, in words.
          for (const c of r.clipCandidates) assert.match(c.reason, /^[a-z].{20,}/, r.name)
          // Summaries are verbatim sentences: a question keeps its "?" and no greeting opens one.
          for (const s of r.insights.summary.sentences) {
            assert.include(transcript.text, s.text.split(". ")[0]!, r.name)
            assert.notMatch(s.text, /^(welcome|thanks|thank you|hello|hi|good (morning|afternoon|evening))\b/i, r.name)
          }
        }
      }))
  })
})
