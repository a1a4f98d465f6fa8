/**
 * Measures the quality set through the services a user's request goes through: library search
 * (moments within each recording, with and without `min_relevance`), insights (summary, topics,
 * quotes) and clip candidates. Shared by `bench/quality.ts` (prints) and
 * `test/quality/quality.test.ts` (holds the line).
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { Embedder } from "../../search/Embedder.ts"
import { SearchIndex } from "../../search/SearchIndex.ts"
import { Insights } from "../../services/insights/Insights.ts"
import { addressedNames, extractCandidates } from "../../services/insights/KeyPhrases.ts"
import { splitSentences } from "../../services/insights/Sentences.ts"
import { UNITS } from "../../services/insights/Stopwords.ts"
import { clipCandidates, phrasesOf } from "../../services/search-index/ClipCandidates.ts"
import { defaultMinRelevance } from "../../src/contract/api/SearchApi.ts"
import type { Insights as InsightsPayload } from "../../src/contract/domain/Insights.ts"
import {
  type CandidateCheck,
  type CandidateRecall,
  candidateRecall,
  checkOpenings,
  factCoverage,
  type FactCoverage,
  keyPhraseHits,
  type Recording,
  rightMoment
} from "./set.ts"

export interface QuestionResult {
  readonly q: string
  /** 1-based rank of the right moment among the first 5 hits, or 0. */
  readonly rank: number
  readonly top: string
  readonly topRelevance: number
}

export interface RecordingResult {
  readonly name: string
  readonly questions: ReadonlyArray<QuestionResult>
  /** Unanswerable questions that got no hit at the default `min_relevance`. */
  readonly noHit: number
  readonly unanswerable: number
  readonly coverage: FactCoverage
  readonly summary: string
  readonly topics: ReadonlyArray<string>
  readonly topicsRight: number
  readonly topicsWrong: ReadonlyArray<string>
  readonly phraseRecall: CandidateRecall
  readonly quotes: CandidateCheck
  readonly candidates: CandidateCheck
  readonly insights: InsightsPayload
  readonly clipCandidates: ReadonlyArray<{ readonly kind: string; readonly text: string; readonly reason: string }>
}

export interface Totals {
  readonly hitAt1: number
  readonly mrr: number
  readonly noHitRate: number
  /** Summary facts covered / annotated facts. */
  readonly factCoverage: number
  /** Summary facts covered / facts the transcript says (whisper hears them). */
  readonly heardFactCoverage: number
  readonly keyPhrasePrecision: number
  /** Annotated key phrases the transcripts say that are key-phrase candidates / those said. */
  readonly candidateRecall: number
  readonly badQuotes: number
  readonly quotes: number
  readonly badCandidates: number
  readonly candidates: number
}

const accountId = randomUUID()

export const measureRecording = Effect.fnUntraced(function*(r: Recording) {
  const index = yield* SearchIndex
  const insights = yield* Insights
  const embedder = yield* Embedder
  const jobId = randomUUID()
  yield* index.indexJob(accountId, jobId, { filename: r.annotation.name, language: "en", created_at: new Date() }, r.transcript)

  const questions: Array<QuestionResult> = []
  for (const q of r.annotation.questions) {
    const hits = yield* index.search({ accountId, q: q.q, limit: 5, jobIds: [jobId] })
    const at = hits.findIndex((h) => rightMoment(r.annotation, q, h))
    questions.push({ q: q.q, rank: at + 1, top: hits[0]?.text ?? "", topRelevance: hits[0]?.relevance ?? 0 })
  }
  let noHit = 0
  for (const q of r.annotation.unanswerable) {
    const hits = yield* index.search({ accountId, q, limit: 5, jobIds: [jobId], minRelevance: defaultMinRelevance })
    if (hits.length === 0) noHit++
  }

  const result = yield* insights.generate(r.transcript, { provider: "extractive" })
  const coverage = factCoverage(r, result.summary.text)
  const topics = keyPhraseHits(r, result.topics)
  // The candidates the topics are ranked from, with the units and addressed names Extractive leaves out.
  const sentences = splitSentences(r.transcript.segments)
  const candidateKeys = new Set(extractCandidates(sentences, new Set([...addressedNames(sentences), ...UNITS])).map((c) => c.key))

  const phrases = phrasesOf(r.transcript)
  const vectors = yield* embedder.embed(phrases.map((p) => p.text))
  // Every kind a caller can ask for (`kind=hook|question|insight|quote|all`).
  const candidates = (["all", "hook", "question", "insight", "quote"] as const).flatMap((kind) => clipCandidates(phrases, vectors, { kind }))

  return {
    name: r.annotation.name,
    questions,
    noHit,
    unanswerable: r.annotation.unanswerable.length,
    coverage,
    summary: result.summary.text,
    topics: result.topics.map((t) => t.phrase),
    topicsRight: topics.right,
    topicsWrong: topics.wrong,
    phraseRecall: candidateRecall(r, candidateKeys),
    quotes: checkOpenings(r.transcript, result.quotes),
    candidates: checkOpenings(r.transcript, candidates),
    insights: result,
    clipCandidates: candidates.map((c) => ({ kind: c.kind, text: c.text, reason: c.reason }))
  } satisfies RecordingResult
})

export const totals = (results: ReadonlyArray<RecordingResult>): Totals => {
  const questions = results.flatMap((r) => r.questions)
  const sum = (f: (r: RecordingResult) => number) => results.reduce((a, r) => a + f(r), 0)
  return {
    hitAt1: questions.filter((q) => q.rank === 1).length / questions.length,
    mrr: questions.reduce((a, q) => a + (q.rank > 0 ? 1 / q.rank : 0), 0) / questions.length,
    noHitRate: sum((r) => r.noHit) / sum((r) => r.unanswerable),
    factCoverage: sum((r) => r.coverage.covered) / sum((r) => r.coverage.facts),
    heardFactCoverage: sum((r) => r.coverage.covered) / sum((r) => r.coverage.heard),
    keyPhrasePrecision: sum((r) => r.topicsRight) / sum((r) => r.topics.length),
    candidateRecall: sum((r) => r.phraseRecall.candidates) / sum((r) => r.phraseRecall.heard),
    badQuotes: sum((r) => r.quotes.bad.length),
    quotes: sum((r) => r.quotes.total),
    badCandidates: sum((r) => r.candidates.bad.length),
    candidates: sum((r) => r.candidates.total)
  }
}

const pct = (x: number) => x.toFixed(2)

/** The report bench/quality.ts prints (and the test logs). */
export const report = (results: ReadonlyArray<RecordingResult>, verbose = true): string => {
  const lines: Array<string> = []
  for (const r of results) {
    const hit1 = r.questions.filter((q) => q.rank === 1).length
    lines.push(
      `${r.name}: moments hit@1 ${hit1}/${r.questions.length}, unanswerable no-hit ${r.noHit}/${r.unanswerable}, ` +
        `facts ${r.coverage.covered}/${r.coverage.facts} (heard ${r.coverage.heard}), key phrases ${r.topicsRight}/${r.topics.length} ` +
        `(candidates ${r.phraseRecall.candidates}/${r.phraseRecall.heard} of annotated), ` +
        `quotes on answer/reaction ${r.quotes.bad.length}/${r.quotes.total}, candidates ${r.candidates.bad.length}/${r.candidates.total}`
    )
    if (!verbose) continue
    for (const q of r.questions.filter((q) => q.rank !== 1)) lines.push(`  moment miss (rank ${q.rank || "-"}): "${q.q}" → ${q.top.slice(0, 80)}`)
    lines.push(`  summary: ${r.summary}`)
    if (r.coverage.missing.length > 0) lines.push(`  facts missing: ${r.coverage.missing.join("; ")}`)
    lines.push(`  topics: ${r.topics.join(", ")}${r.topicsWrong.length > 0 ? `  (not key phrases: ${r.topicsWrong.join(", ")})` : ""}`)
    if (r.phraseRecall.missing.length > 0) lines.push(`  annotated phrases said but not candidates: ${r.phraseRecall.missing.join(", ")}`)
    for (const q of r.insights.quotes) lines.push(`  quote: ${q.text}`)
    for (const c of r.clipCandidates) lines.push(`  candidate ${c.kind}: ${c.text.slice(0, 70)}… — ${c.reason}`)
    for (const b of [...r.quotes.bad, ...r.candidates.bad]) lines.push(`  BAD (${b.why}): ${b.text.slice(0, 80)}`)
  }
  const t = totals(results)
  lines.push(
    `TOTAL: moment hit@1 ${pct(t.hitAt1)} (target 0.8), MRR ${pct(t.mrr)}, unanswerable no-hit ${pct(t.noHitRate)} (target 0.9), ` +
      `summary fact coverage ${pct(t.factCoverage)} of annotated / ${pct(t.heardFactCoverage)} of heard (target 0.7), ` +
      `key-phrase precision ${pct(t.keyPhrasePrecision)} (candidate recall ${pct(t.candidateRecall)}), quotes on answer/reaction ${t.badQuotes}/${t.quotes}, ` +
      `candidates on answer/reaction ${t.badCandidates}/${t.candidates} (target 0)`
  )
  return lines.join("\n")
}
