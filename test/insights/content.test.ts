/**
 * Issue 24 items 2–4, measured on text fixtures with the real MiniLM weights: summaries carry the
 * guests' facts, topics are key phrases without first names or units, and no quote or clip
 * candidate opens on a bare answer or a reaction to something outside it. The figures are
 * printed (README "Insights" quotes them) and the assertions hold the line at them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import { Embedder } from "../../search/Embedder.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { Insights } from "../../services/insights/Insights.ts"
import { clipCandidates, phrasesOf } from "../../services/search-index/ClipCandidates.ts"
import { a08Transcript, BEES, BEES_FACTS, BEES_NAMES, BEES_UNITS, dialogueTranscript, manifest, modelsDir, textsTranscript } from "./transcripts.ts"

const embedder = Embedder.layer({ modelsDir, threads: 1 }).pipe(
  Layer.provide(OnnxRuntime.layer({ threads: 1, idleUnloadMs: 30_000 }))
)
const layer = Layer.mergeAll(Insights.layer().pipe(Layer.provide(embedder)), embedder)

interface Case {
  readonly name: string
  readonly transcript: Transcript
  readonly facts: ReadonlyArray<string>
  readonly names: ReadonlyArray<string>
}
const CASES: ReadonlyArray<Case> = [
  { name: "bees", transcript: dialogueTranscript(BEES), facts: BEES_FACTS, names: BEES_NAMES },
  { name: "a08", transcript: a08Transcript(), facts: ["two meters", "ten meters", "twenty thousand dollars", "forty volunteers", "dune grass"], names: ["laura", "samuel", "priya"] },
  { name: "a05", transcript: textsTranscript([manifest["a05_dialogue_slt_kal.wav"]!.text]), facts: ["payment terms", "legal team", "thursday"], names: [] }
]

const UNITS = new Set([...BEES_UNITS, "metres", "metre", "dollars", "kilometers", "seconds", "minutes", "hours"])
/** A reaction or bare answer: it leans on something said before it. */
const REACTION = /^(never|yes|no|yeah|exactly|absolutely|sure|right|indeed|true|correct|wow|that is|that's|this is|all the time)\b/i
/** The opening sentence is a bare answer/reaction: at most 3 words, or a reaction opening. */
const opensOnReaction = (text: string) => {
  const first = text.split(/(?<=[.!?])\s+/)[0]!
  return first.split(/\s+/).length <= 3 || REACTION.test(first)
}

describe("insights content (issue 24 items 2–4)", () => {
  it.layer(layer, { timeout: 120_000 })((it) => {
    it.effect("summary fact coverage, key-phrase topics, quotes and candidates that stand alone", () =>
      Effect.gen(function*() {
        const insights = yield* Insights
        const embedderService = yield* Embedder
        const figures: Array<string> = []
        const checks: Array<() => void> = []
        for (const c of CASES) {
          const result = yield* insights.generate(c.transcript)
          const summary = result.summary.text.toLowerCase()
          const covered = c.facts.filter((f) => summary.includes(f)).length
          const phrases = result.topics.map((t) => t.phrase)
          const badTopics = phrases.filter((p) => p.split(" ").some((w) => c.names.includes(w) || UNITS.has(w)))
          const multi = phrases.filter((p) => p.includes(" ")).length
          const badQuotes = result.quotes.filter((q) => opensOnReaction(q.text))
          const phrasesList = phrasesOf(c.transcript)
          const vectors = yield* embedderService.embed(phrasesList.map((p) => p.text))
          const candidates = (["all", "hook", "question", "insight", "quote"] as const)
            .flatMap((kind) => clipCandidates(phrasesList, vectors, { kind }))
          // On an answer: the phrase just before the candidate is a question it does not hold.
          const opensOnAnswer = (start: number) => {
            const before = phrasesList.filter((p) => p.end <= start + 1e-6).at(-1)
            return before !== undefined && /\?$/.test(before.text)
          }
          const badCandidates = candidates.filter((k) => opensOnReaction(k.text) || opensOnAnswer(k.start))
          figures.push(
            `${c.name}: summary facts ${covered}/${c.facts.length}; topics ${phrases.length} (${multi} multi-word, ${badTopics.length} names/units) [${phrases.join(", ")}]; ` +
              `quotes on reaction ${badQuotes.length}/${result.quotes.length}; candidates on answer/reaction ${badCandidates.length}/${candidates.length}`
          )
          figures.push(`  summary: ${result.summary.text}`)
          for (const k of badCandidates) figures.push(`  candidate ${k.kind}: ${k.text.slice(0, 70)}… — ${k.reason}`)
          checks.push(() => {
          // The line held: every measured figure at least as good as measured after the fix.
          assert.deepStrictEqual(badTopics, [], c.name)
          assert.deepStrictEqual(badQuotes.map((q) => q.text), [], c.name)
          assert.deepStrictEqual(badCandidates.map((k) => k.text), [], c.name)
          assert.isAtLeast(covered / c.facts.length, MIN_COVERAGE[c.name]!, `${c.name}: ${summary}`)
          // Verbatim, punctuation included: a question stays a question.
          for (const q of result.summary.sentences) assert.include(c.transcript.text, q.text)
          // Framing is left out: no greeting, thanks or sign-off in the summary.
          for (const q of result.summary.sentences) assert.notMatch(q.text, /^(welcome|thanks|thank you|hello|hi)\b/i)
          for (const k of candidates) assert.isAbove(k.reason.length, 10)
          })
        }
        console.log(figures.join("\n"))
        for (const check of checks) check()
      }))
  })
})

/**
 * Summary fact coverage measured after issue 24 (before: bees 1/5, a08 1/5, a05 1/3; after the
 * first pass 4/5, 4/5, 2/3; after the quality-set pass, summaries spread over the answers: all).
 */
const MIN_COVERAGE: Record<string, number> = { bees: 1, a08: 1, a05: 1 }
