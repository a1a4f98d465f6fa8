/**
 * Clip candidate scoring (services/search-index/ClipCandidates.ts) on a written transcript whose
 * moments are known: a hook, a question with its answer, an explanation with figures, a quotable
 * statement, and filler that should not be chosen. Centrality uses real MiniLM vectors.
 */
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import { Embedder } from "../../search/Embedder.ts"
import { clipCandidates, durationPrior, type Phrase, phrasesOf, rateScore } from "../../services/search-index/ClipCandidates.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { modelsDir } from "../support/paths.ts"

/** Sentences spoken back to back at ~2.8 words per second, with a 0.4 s pause between. */
const speak = (sentences: ReadonlyArray<readonly [string, string | null]>): Transcript => {
  let t = 0
  const segments = sentences.map(([text, speaker]) => {
    const seconds = text.split(/\s+/).length / 2.8
    const segment = { start: Math.round(t * 100) / 100, end: Math.round((t + seconds) * 100) / 100, text, speaker }
    t += seconds + 0.4
    return segment
  })
  return { text: segments.map((s) => s.text).join(" "), language: "en", duration: t, speech_detected: true, segments }
}

const transcript = speak([
  ["and um so yeah we were just sort of getting started with things there.", "A"],
  ["it was a bit of a slow morning really, nothing much going on.", "A"],
  ["anyway the coffee machine was broken again so that took a while.", "A"],
  ["Here's the thing nobody tells you about coastal erosion.", "A"],
  ["The cliffs do not retreat a little every year; they collapse all at once after a storm.", "A"],
  ["A single night in February took eleven metres from the headland.", "A"],
  ["That is why the warning signs matter more than the averages.", "A"],
  ["Why not simply build a bigger sea wall along the whole bay?", "B"],
  ["Because a sea wall moves the problem down the coast instead of solving it.", "A"],
  ["The beach in front of the wall loses its sand, and the next village gets the waves.", "A"],
  ["We tried it in the nineteen eighties and the cost came to four million pounds.", "A"],
  ["um well yeah so anyway.", "B"],
  ["and then it was sort of, you know, more of the same after that.", "B"],
  ["I believe the dunes are the best defence we have.", "A"],
  ["Plant them, fence them, and let them grow.", "A"],
  ["They heal themselves after every storm, which no wall can do.", "A"],
  ["so yeah that was about it for the day.", "B"]
])

const embedderLayer = Embedder.layer({ modelsDir }).pipe(Layer.provide(OnnxRuntime.layer({ threads: 1, idleUnloadMs: 5_000 })))
const embed = (texts: ReadonlyArray<string>) =>
  Effect.runPromise(Effect.scoped(Embedder.use((e) => e.embed(texts))).pipe(Effect.provide(embedderLayer)))

const candidatesOf = async (kind: Parameters<typeof clipCandidates>[2]["kind"]) => {
  const phrases = phrasesOf(transcript)
  return { phrases, candidates: clipCandidates(phrases, await embed(phrases.map((p) => p.text)), { kind }) }
}

const checkRules = (phrases: ReadonlyArray<Phrase>, candidates: ReturnType<typeof clipCandidates>) => {
  const starts = new Set(phrases.map((p) => Math.round(p.start * 1000) / 1000))
  const ends = new Set(phrases.map((p) => Math.round(p.end * 1000) / 1000))
  for (const [i, c] of candidates.entries()) {
    expect(c.end - c.start, JSON.stringify(c)).toBeGreaterThanOrEqual(10)
    expect(c.end - c.start, JSON.stringify(c)).toBeLessThanOrEqual(60)
    expect(starts.has(c.start), `start ${c.start} on a phrase boundary`).toBe(true)
    expect(ends.has(c.end), `end ${c.end} on a phrase boundary`).toBe(true)
    expect(c.score).toBeGreaterThan(0)
    expect(c.score).toBeLessThanOrEqual(1)
    expect(c.reason.length).toBeGreaterThan(5)
    if (i > 0) expect(c.score).toBeLessThanOrEqual(candidates[i - 1]!.score)
    for (const other of candidates.slice(0, i)) expect(c.start >= other.end || c.end <= other.start, "no overlap").toBe(true)
    // Issue 24: never opens on the answer to a question left outside it ("Because a sea wall…").
    const before = phrases.filter((p) => p.end <= c.start + 0.001).at(-1)
    expect(before === undefined || !before.text.endsWith("?"), `${c.text} opens on an answer`).toBe(true)
  }
}

describe("clip candidates", () => {
  it("all kinds: 10–60 s on phrase boundaries, non-overlapping, best first; the written moments win over filler", async () => {
    const { phrases, candidates } = await candidatesOf("all")
    checkRules(phrases, candidates)
    expect(candidates.length).toBeGreaterThanOrEqual(3)
    // The three written moments, each whole and labelled with its kind, come first.
    const top = candidates.slice(0, 3).map((c) => [c.kind, c.text.slice(0, 24)])
    expect(top).toEqual(expect.arrayContaining([
      ["hook", "Here's the thing nobody "],
      ["question", "Why not simply build a b"],
      ["quote", "I believe the dunes are "]
    ]))
    // The filler openings never start a candidate.
    for (const c of candidates) expect(c.text).not.toMatch(/^(and|anyway|um|so yeah|it was)/i)
    expect(new Set(candidates.map((c) => c.kind)).size).toBeGreaterThanOrEqual(2)
  })

  it("hook: the moment opening with hook phrasing", async () => {
    const { phrases, candidates } = await candidatesOf("hook")
    checkRules(phrases, candidates)
    expect(candidates[0]!.text).toMatch(/^Here's the thing nobody tells you/)
    expect(candidates[0]!.kind).toBe("hook")
    expect(candidates[0]!.reason).toMatch(/hook phrasing/)
  })

  it("question: the question and the answer that follows it", async () => {
    const { phrases, candidates } = await candidatesOf("question")
    checkRules(phrases, candidates)
    expect(candidates[0]!.text).toMatch(/^Why not simply build a bigger sea wall/)
    expect(candidates[0]!.text).toContain("moves the problem down the coast")
    expect(candidates[0]!.reason).toMatch(/answered .* by another speaker/)
    for (const c of candidates) expect(c.kind).toBe("question")
  })

  it("insight: figures and explanations", async () => {
    const { phrases, candidates } = await candidatesOf("insight")
    checkRules(phrases, candidates)
    expect(candidates.length).toBeGreaterThan(0)
    expect(candidates.some((c) => /eleven metres|four million pounds/.test(c.text))).toBe(true)
    expect(candidates[0]!.reason).toMatch(/figure|explanation/)
  })

  it("quote: a self-contained statement, ending on a complete sentence and free of questions", async () => {
    const { phrases, candidates } = await candidatesOf("quote")
    checkRules(phrases, candidates)
    expect(candidates.length).toBeGreaterThan(0)
    for (const c of candidates) {
      expect(c.text).not.toContain("?")
      expect(c.text).toMatch(/[.!]$/)
    }
    expect(candidates.some((c) => c.text.includes("I believe the dunes are the best defence"))).toBe(true)
  })

  it("finds nothing in a recording shorter than 10 seconds, and nothing in silence", () => {
    const short = speak([["A short remark about the weather today.", null]])
    expect(clipCandidates(phrasesOf(short), [], { kind: "all" })).toEqual([])
    expect(clipCandidates([], [], { kind: "all" })).toEqual([])
  })

  it("duration prior and speech rate are bounded and peak where documented", () => {
    expect(durationPrior(30)).toBe(1)
    expect(durationPrior(10)).toBeCloseTo(0.4)
    expect(durationPrior(60)).toBeCloseTo(0.4)
    expect(durationPrior(15)).toBeGreaterThan(0.4)
    expect(rateScore(3)).toBe(1)
    expect(rateScore(1)).toBe(0)
    expect(rateScore(6)).toBe(0)
  })
})
