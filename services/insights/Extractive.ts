/**
 * The extractive insights: every field built from the transcript's own sentences and MiniLM
 * sentence embeddings, no network.
 *
 * - summary: centrality of each sentence (its mean cosine to all other sentences), damped for
 *   sentences under 8 words, weighed for content (`summaryRelevance`: figures, decisions and
 *   answers up, questions down, greetings, thanks and introductions out or damped), then MMR
 *   (λ = 0.7; with several speakers two sentences of one turn count as at least 0.6 alike, so
 *   the summary spreads over the answers) for `summarySize(n, answered)` sentences, in spoken order
 *   (verbatim: a question keeps its "?"); a recording of 1–3 sentences is its own summary
 *   (without sentences of stop words only, such as "Okay." or "Um.", unless that is all there
 *   is), and one under `SHORT_WORDS` words is summarised by its sentences that carry content.
 * Short recordings (down to `MIN_WORDS`, 3 words) go the same way with sizes that shrink with
 * them: a few topics, a quote only when a sentence is quotable, one chapter.
 * - quotes: sentences of 6–45 words ending in "." or "!", not opening with a dangling word
 *   ("and", "so", "it", "but", "because"…, `DANGLING_OPENINGS`) or a reaction ("Never", "Exactly",
 *   "That is…"), not framing or an introduction, not the first sentence of an answer to another
 *   speaker's question (`standsAlone`); salience = centrality plus the
 *   share of top topics they mention; MMR (λ = 0.6) for `quoteCount(n)`, preferring sentences not
 *   already in the summary; in spoken order.
 * - topics: `KeyPhrases.ts` against the length-weighted document centroid, never holding a
 *   speaker's name, a name said when addressing someone (`addressedNames`) or a unit (`UNITS`).
 * - chapters: `TextTiling.ts` (window 3 sentences, 2 under 12 sentences; chapters of at least
 *   3 sentences and max(40, words / 15) words; at most words / 75 chapters (rounded), 12 at most).
 *   Title: the chapter's top one or two key phrases against its centroid; gist: its sentence
 *   closest to its centroid.
 * - speakers: `SpeakerStats.ts`, named by `SpeakerNames.ts` (name, confidence, evidence).
 */
import { Effect } from "effect"
import type { Chapter, Insights, Quote, SummarySentence, Topic } from "../../src/contract/domain/Insights.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import type { InsightsUnavailable } from "./InsightsErrors.ts"
import { addressedNames, type Candidate, extractCandidates, pruneCandidates, rankPhrases, stem } from "./KeyPhrases.ts"
import { mmr } from "./Mmr.ts"
import { type Sentence, tokenize } from "./Sentences.ts"
import { identifySpeakers } from "./SpeakerNames.ts"
import { speakerStats } from "./SpeakerStats.ts"
import { DANGLING_OPENINGS, STOPWORDS, UNITS } from "./Stopwords.ts"
import { textTiling } from "./TextTiling.ts"
import { centroid, dot, minMax } from "./Vectors.ts"

export type Embed = (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Float32Array>, InsightsUnavailable>

/** Candidates embedded for topics at most (the most frequent). */
const MAX_PHRASE_CANDIDATES = 200
const MAX_OCCURRENCES = 20
/** Chapter titles lean on similarity to the chapter more than topics do (a chapter's counts are small). */
const TITLE_SIMILARITY_WEIGHT = 0.8

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x))
/**
 * Up to 3 sentences are their own summary; longer talks get about one sentence in three and a
 * half, 2 to 8, and at least one more than the questions another speaker answers (`answered`),
 * up to 8: an interview's facts sit one answer per question. Measured on the quality set
 * (test/quality): one in five (3 sentences of a 15-sentence interview) held under half of its facts.
 */
export const summarySize = (n: number, answered = 0) =>
  n <= 3 ? n : Math.min(n, Math.max(clamp(Math.round(n / 3.5), 2, 8), Math.min(8, answered + 1)))
const SAME_TURN_SIMILARITY = 0.6
/** Under this many words (a voice memo of ~30 s) every sentence that carries content is the summary. */
export const SHORT_WORDS = 80
export const quoteCount = (n: number) => clamp(Math.round(n / 8), 1, 5)
/** One phrase per 8 words under 125 words (a 22-word memo gets 3), else one per 25 words, 5–10. */
export const topicCount = (words: number) =>
  words < 125 ? clamp(Math.round(words / 8), 1, 5) : clamp(Math.round(words / 25), 5, 10)

const round2 = (x: number) => Math.round(x * 100) / 100

/** A reaction or answer word opening a sentence: it leans on something said before ("Never, …", "That is frightening"). */
const REACTION_OPENING = /^["'“‘(]?(?:never|yes|no|exactly|absolutely|sure|indeed|true|correct|definitely|wow|that is|this is)\b/i

/** A sentence that can stand alone as a quote (verbatim, complete, no dangling opening). */
export const isQuotable = (s: Sentence): boolean =>
  s.tokens.length >= 6 &&
  !REACTION_OPENING.test(s.text) &&
  s.tokens.length <= 45 &&
  /[.!]["'”’)]*$/.test(s.text) &&
  !DANGLING_OPENINGS.has(s.tokens[0]!) &&
  /^["'“‘(]?[\p{Lu}\p{N}]/u.test(s.text)

/**
 * A host introducing the show or a guest: framing, never a quote ("My guest is…", "Today I am
 * talking to…", "We also have Priya on the line"). Not "on the line" alone: "our jobs are on the
 * line" is content. Clip candidates use it too (ClipCandidates.ts).
 */
export const INTRODUCTION =
  /\b(?:welcome (?:back )?to|my guests? (?:today )?(?:is|are)|(?:i am|i'm) (?:talking to|joined by)|(?:we|i) (?:also )?have [\p{L} ]{1,30} on the line|joining (?:me|us))\b/iu

/**
 * Sentence `i` stands alone as a quote in its context: it is not framing or an introduction,
 * and it does not open the answer to another speaker's question (the answer leans on it:
 * "People bring broken toasters…" after "What happens at a repair cafe?").
 */
export const standsAlone = (sentences: ReadonlyArray<Sentence>, i: number): boolean => {
  const s = sentences[i]!
  if (FRAMING.test(s.text) || INTRODUCTION.test(s.text)) return false
  const previous = sentences[i - 1]
  return previous === undefined || previous.speaker === s.speaker || !isQuestionSentence(previous)
}

/** Greetings, thanks, sign-offs and show names: framing that carries no content. */
const FRAMING = /^(?:(?:okay|ok|right|so),? let(?: us|'s) (?:start|begin)\b|let(?: us|'s) (?:start|begin)\b|welcome\b|good (?:morning|afternoon|evening)\b|hello\b|hi\b|hey\b|thanks\b|thank you\b|great advice\b|that is all\b|that's all\b|goodbye\b|bye\b|see you\b|it is (?:great|good|a pleasure) to be\b|it's (?:great|good|a pleasure) to be\b)/i
/** A figure: digits or a number word (facts, amounts, dates). */
const FIGURE = /\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|sixty|hundred|thousand|million|billion|percent|half|twice|double|triple|dozen|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i
/** A decision or a finding: what was agreed, chosen or found. */
const DECISION = /\b(?:decided?|decision|agreed?|will|found|we chose|plan(?:s|ned)? to|need(?:s)? to|should|must|because)\b/i
const isQuestionSentence = (s: Sentence) => /\?["'”’)]*$/.test(s.text)

/**
 * Summary relevance: centrality (0..1) less framing, plus what carries content: a figure
 * (+0.35), a decision or reason (+0.15), and the answer to another speaker's question (+0.25);
 * a question keeps half its centrality less 0.1 (its answer says more, and a question is often
 * the most central sentence: it names the subject), framing keeps a fifth of its centrality.
 */
export const summaryRelevance = (sentences: ReadonlyArray<Sentence>, centrality: ReadonlyArray<number>): Array<number> => {
  let asker: string | null | undefined
  return minMax(sentences.map((s, i) => {
    const previous = sentences[i - 1]
    if (previous !== undefined && previous.speaker !== s.speaker) asker = isQuestionSentence(previous) ? previous.speaker : undefined
    const answers = asker !== undefined && s.speaker !== asker && !isQuestionSentence(s)
    const framing = FRAMING.test(s.text)
    // An introduction may carry who someone is ("a geologist who studies…"): half its centrality.
    const question = isQuestionSentence(s)
    return centrality[i]! * (framing ? 0.2 : INTRODUCTION.test(s.text) || question ? 0.5 : 1) +
      (framing ? 0 : (FIGURE.test(s.text) ? 0.35 : 0) + (DECISION.test(s.text) ? 0.15 : 0)) +
      (answers ? 0.25 : 0) - (question ? 0.1 : 0)
  }))
}

export interface ExtractiveResult {
  readonly insights: Insights
  readonly sentences: ReadonlyArray<Sentence>
  /** Sentence index ranges [from, to) of the chapters, parallel to `insights.chapters`. */
  readonly chapterRanges: ReadonlyArray<readonly [number, number]>
  readonly names: ReadonlyMap<string, string>
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

export const extractive = Effect.fnUntraced(function*(
  transcript: Transcript,
  sentences: ReadonlyArray<Sentence>,
  embed: Embed
) {
  const n = sentences.length
  const totalWords = sentences.reduce((a, s) => a + s.tokens.length, 0)
  const identities = identifySpeakers(sentences)
  const names = new Map([...identities].map(([label, identity]) => [label, identity.name]))
  const nameOf = (label: string | null) => (label === null ? null : names.get(label) ?? null)

  const vectors = yield* embed(sentences.map((s) => s.text))
  const document = centroid(vectors, sentences.map((s) => Math.sqrt(s.tokens.length)))
  // Mean cosine to the other sentences = (v_i · Σ v_j − 1) / (n − 1): linear in n, no n×n matrix
  // (a 10-hour recording has ~6,000 sentences).
  const sum = new Float32Array(vectors[0]?.length ?? 0)
  for (const v of vectors) for (let d = 0; d < sum.length; d++) sum[d]! += v[d]!
  const centrality = sentences.map((s, i) =>
    (n > 1 ? (dot(vectors[i]!, sum) - 1) / (n - 1) : 1) * Math.min(1, s.tokens.length / 8)
  )
  const relevance = minMax(centrality)
  const similarity = (i: number, j: number) => dot(vectors[i]!, vectors[j]!)
  // Turns (runs of one speaker) when several speakers are known: two sentences of one turn count
  // as at least SAME_TURN_SIMILARITY alike for the summary, so it covers more of the answers
  // (an interview's facts sit one turn per question) instead of two sentences of the first one.
  const turnOf: Array<number> = []
  sentences.forEach((s, i) => turnOf.push(i === 0 ? 0 : turnOf[i - 1]! + (s.speaker === sentences[i - 1]!.speaker ? 0 : 1)))
  const severalSpeakers = new Set(sentences.map((s) => s.speaker)).size > 1 && sentences.every((s) => s.speaker !== null)
  const turnSimilarity = (i: number, j: number) =>
    severalSpeakers && turnOf[i] === turnOf[j] ? Math.max(SAME_TURN_SIMILARITY, similarity(i, j)) : similarity(i, j)

  const timed = (s: Sentence): SummarySentence => ({
    text: s.text,
    start: round2(s.start),
    end: round2(s.end),
    speaker: s.speaker,
    speaker_name: nameOf(s.speaker)
  })

  // A memo of up to 3 sentences is its own summary, less the ones that say nothing ("Okay.", "Um.").
  const saying = sentences.flatMap((s, i) => (s.tokens.some((t) => !STOPWORDS.has(t)) ? [i] : []))
  // A short memo is all content: its summary is every sentence but framing and bare reactions.
  const content = saying.filter((i) => !FRAMING.test(sentences[i]!.text) && !(REACTION_OPENING.test(sentences[i]!.text) && sentences[i]!.tokens.length <= 6) && sentences[i]!.tokens.length > 2)
  // Questions another speaker answers: each answer carries content, the summary has room for them.
  const answered = sentences.filter((s, i) => isQuestionSentence(s) && sentences[i + 1] !== undefined && sentences[i + 1]!.speaker !== s.speaker)
    .length
  const summaryPicks = n <= 3
    ? (saying.length > 0 ? saying : sentences.map((_, i) => i))
    : totalWords < SHORT_WORDS && content.length > 0
    ? content
    : mmr(summaryRelevance(sentences, relevance), turnSimilarity, summarySize(n, answered), 0.7).sort((a, b) => a - b)
  const summarySentences = summaryPicks.map((i) => timed(sentences[i]!))

  // Topics
  // People and units are not topics: speaker names, names said when addressing someone, units.
  const nameWords = new Set([...[...names.values()].flatMap((name) => tokenize(name)), ...addressedNames(sentences), ...UNITS])
  const candidates = pruneCandidates(extractCandidates(sentences, nameWords), MAX_PHRASE_CANDIDATES)
  const phraseVectors = yield* embed(candidates.map((c) => c.phrase))
  const ranked = rankPhrases(candidates, phraseVectors, document, topicCount(totalWords))
  const topics: Array<Topic> = ranked.map(({ candidate, weight }) => ({
    phrase: candidate.phrase,
    weight: Math.round(weight * 1000) / 1000,
    count: candidate.occurrences.length,
    occurrences: candidate.occurrences.slice(0, MAX_OCCURRENCES).map((o) => ({ start: round2(o.start), end: round2(o.end) }))
  }))

  // Quotes
  const topicStems = new Set(ranked.flatMap(({ candidate }) => candidate.stems))
  const quotable = sentences.map((s, i) => ({ s, i })).filter(({ s, i }) => isQuotable(s) && standsAlone(sentences, i))
  const inSummary = new Set(summaryPicks)
  const salience = minMax(quotable.map(({ s, i }) => {
    const mentions = s.tokens.filter((t) => topicStems.has(stem(t))).length
    const base = relevance[i]! + Math.min(1, mentions / 3) * 0.5
    return inSummary.has(i) ? base * 0.8 : base
  }))
  const quotePicks = mmr(salience, (a, b) => similarity(quotable[a]!.i, quotable[b]!.i), quoteCount(n), 0.6)
    .map((k) => quotable[k]!.i)
    .sort((a, b) => a - b)
  const quotes: Array<Quote> = quotePicks.map((i) => timed(sentences[i]!))

  // Chapters
  const starts = textTiling(vectors, sentences.map((s) => s.tokens.length), {
    window: n >= 12 ? 3 : 2,
    minSentences: 3,
    minWords: Math.max(40, Math.round(totalWords / 15)),
    maxChapters: clamp(Math.round(totalWords / 75), 1, 12)
  })
  const chapterRanges = starts.map((from, k) => [from, starts[k + 1] ?? n] as const)
  const chapters: Array<Chapter> = chapterRanges.map(([from, to]) => {
    const inside = sentences.slice(from, to)
    const center = centroid(vectors.slice(from, to))
    const long = inside.filter((s) => s.tokens.length >= 5)
    const pool = long.length > 0 ? long : inside
    const gist = pool.reduce((best, s) => (dot(vectors[s.index]!, center) > dot(vectors[best.index]!, center) ? s : best))
    const local: Array<Candidate> = []
    const localVectors: Array<Float32Array> = []
    candidates.forEach((c, k) => {
      const occurrences = c.occurrences.filter((o) => o.sentence >= from && o.sentence < to)
      if (occurrences.length === 0) return
      local.push({ ...c, occurrences })
      localVectors.push(phraseVectors[k]!)
    })
    const titlePhrases = rankPhrases(local, localVectors, center, 2, TITLE_SIMILARITY_WEIGHT).map((r) => r.candidate.phrase)
    const title = titlePhrases.length > 0
      ? capitalize(titlePhrases.join(" and "))
      : gist.text.split(/\s+/).slice(0, 6).join(" ")
    const heard: Array<string> = []
    for (const s of inside) {
      const who = s.speaker === null ? null : nameOf(s.speaker) ?? s.speaker
      if (who !== null && !heard.includes(who)) heard.push(who)
    }
    return { title, gist: gist.text, start: round2(inside[0]!.start), end: round2(inside[inside.length - 1]!.end), speakers: heard }
  })

  const insights: Insights = {
    summary: { text: summarySentences.map((s) => s.text).join(" "), sentences: summarySentences },
    topics,
    quotes,
    speakers: speakerStats(transcript.segments, identities),
    chapters,
    providers: { summary: "extractive", topics: "extractive", quotes: "extractive", speakers: "extractive", chapters: "extractive" }
  }
  return { insights, sentences, chapterRanges, names } satisfies ExtractiveResult
})
