/**
 * Clip candidates: the moments of one transcript worth cutting into a clip. Pure, apart from
 * the sentence vectors passed in (MiniLM, one per phrase).
 *
 * Units are phrases (segments cut at pauses and punctuation, at most 12 s, as library search
 * moments are), so a candidate starts and ends on a phrase boundary. Every run of consecutive
 * phrases lasting 10–60 s is a span; each span gets a score per kind, the best spans are taken
 * greedily without overlap, best first.
 *
 * Score of a span for a kind, 0..1: 0.45 × the kind's own signal + 0.55 × quality, where
 * quality = 0.2 standalone opening + 0.2 sentence-complete ending + 0.25 centrality
 * + 0.1 speech rate + 0.15 duration prior + 0.1 clean talk (1 − 10 × the share of filler words:
 * um, uh, you know, sort of, yeah…).
 * - hook: the first phrase carries hook phrasing ("here's the thing", "the truth is", "what
 *   if", "nobody", "the biggest", "never", a superlative, "you won't believe", a figure or a
 *   question as the very opening…); stronger the earlier it appears.
 * - question: one of the first two phrases is a question (ends in "?") and at least two
 *   phrases or 6 s of answer follow it inside the span (more answer, up to 20 s, is better;
 *   an answer by another speaker counts extra).
 * - insight: figures (digits, number words, percent, money), explanation markers ("because",
 *   "the reason", "which means", "turns out", "so that") and comparisons; at least two signals,
 *   scored by their density per 10 s (a long span does not win by holding more of them).
 * - quote: a self-contained statement: standalone opening and complete ending required, no
 *   question, not opening on the show's framing ("Welcome back to…", "My guest today is…": no
 *   insight either); first-person conviction ("I think", "I believe", "we need", "the key is") and
 *   short, complete sentences score higher.
 * - standalone opening: the first word does not lean on what came before (and, but, so,
 *   because, it, that, this, they, he, she, which, also, then, well, um…) and the opening
 *   sentence is not a reaction or bare answer ("Never.", "Yes.", "That is frightening.").
 * - never a candidate: a span opening on a reaction or bare answer, or right after a question
 *   it leaves out (it would start on the answer); the span holding the question instead is
 *   one, scored as a question with its answer.
 * - sentence-complete ending: the last phrase ends in . ! or ? and is not filler ("so yeah…");
 *   a span ending on a question ends on a set-up and is not complete.
 * - centrality: mean cosine of the span's phrase vectors with the whole recording's mean vector,
 *   rescaled from [0.1, 0.6] to [0, 1]: a central moment speaks to what the recording is about.
 * - a hook or insight span with a question after its first phrase has moved on to a new
 *   exchange: its signal counts 0.7.
 * - speech rate: words per second; 2.3–3.6 scores 1, falling to 0 at 1.2 and 5.
 * - duration prior: 1 from 20 to 40 s, falling linearly to 0.4 at 10 and 60 s.
 * Speech energy is not used: it needs the audio decoded again (the transcript has no levels).
 */
import { segmentPhrases } from "../../pipeline/SegmentPhrases.ts"
import type { CandidateKind, ClipCandidate } from "../../src/contract/api/SearchApi.ts"
import { candidateLengthLimits } from "../../src/contract/api/SearchApi.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { INTRODUCTION } from "../insights/Extractive.ts"

export const MAX_CANDIDATES = 10
export const PHRASE_OPTIONS = { maxCueSeconds: 12, pauseSeconds: 0.8 }

export interface Phrase {
  readonly start: number
  readonly end: number
  readonly text: string
  readonly speaker: string | null
}

/** The transcript's phrases, in time order, without empty ones. */
export const phrasesOf = (transcript: Transcript): ReadonlyArray<Phrase> =>
  segmentPhrases(transcript.segments, PHRASE_OPTIONS)
    .map((s) => ({ start: s.start, end: s.end, text: s.text.trim(), speaker: s.speaker }))
    .filter((p) => p.text !== "" && p.end > p.start)
    .sort((a, b) => a.start - b.start)

const words = (text: string) => text.split(/\s+/u).filter((w) => /[\p{L}\p{N}]/u.test(w))
const firstWord = (text: string) => (words(text)[0] ?? "").toLowerCase().replace(/[^\p{L}']/gu, "")

const DANGLING = new Set([
  "and", "but", "so", "or", "because", "it", "it's", "its", "that", "that's", "this", "these", "those", "they", "he",
  "she", "him", "her", "them", "which", "who", "also", "then", "well", "um", "uh", "yeah", "okay", "oh", "too",
  "there", "here's", "anyway", "plus", "though", "although", "whereas", "otherwise", "instead", "nor", "yet"
])
/** "Here's" opens a hook, not a dangling reference: checked before DANGLING. */
const HOOK_PATTERNS: ReadonlyArray<RegExp> = [
  /\bhere'?s (the thing|what|why|how|the (secret|truth|problem|trick))\b/i,
  /\b(the (truth|secret|problem|trick|mistake|key|reality) is)\b/i,
  /\b(what if|imagine|picture this|guess what|believe it or not|you won'?t believe|nobody (tells|talks|knows))\b/i,
  /\b(most people|everyone thinks|no one|nobody|never|always|the (biggest|worst|best|most|only|first|last))\b/i,
  /\b(let me tell you|i'?ll tell you|the reason (why|is)|the one thing|stop|listen)\b/i,
  /\b(shocking|surprising|incredible|crazy|insane|huge|massive|dramatic|disaster)\b/i
]
/** One figure: an amount in digits (with its currency or percent sign) or a number word. */
const NUMBER = /([$€£]?\d[\d.,]*%?|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|billion|percent|half|double|triple|dozen)\b)/i
const EXPLANATION = /\b(because|the reason|which means|that means|turns out|so that|as a result|that's why|this is why|in other words|the key|the difference|compared to|instead of|more than|less than|per (year|cent|month|day))\b/i
const CONVICTION = /\b(i (think|believe|know|learned|realized|decided|feel)|we (need|have to|must|should|decided)|you (have to|need to|should)|the (key|lesson|point) is|what matters)\b/i
const isQuestion = (text: string) => /[?？]["”»]?$/u.test(text)
/** Talk that carries nothing: a span ending on it trails off, one full of it rambles. */
const FILLER = /\b(um+|uh+|er+m?|you know|sort of|kind of|i mean|so yeah|yeah|anyway|okay)\b/giu
const fillerShare = (text: string) => (text.match(FILLER) ?? []).length / Math.max(words(text).length, 1)
const completes = (text: string) => /[.!?？。]["”»)]?$/u.test(text) && !/^(um|uh|so yeah|yeah|anyway|okay|and then)\b/iu.test(text)

const clamp01 = (x: number) => Math.max(0, Math.min(1, x))
const round = (x: number) => Math.round(x * 1000) / 1000

export const durationPrior = (seconds: number): number =>
  seconds < 20 ? 0.4 + 0.6 * clamp01((seconds - 10) / 10) : seconds <= 40 ? 1 : 0.4 + 0.6 * clamp01((60 - seconds) / 20)

export const rateScore = (wordsPerSecond: number): number =>
  wordsPerSecond < 2.3 ? clamp01((wordsPerSecond - 1.2) / 1.1) : wordsPerSecond <= 3.6 ? 1 : clamp01((5 - wordsPerSecond) / 1.4)

/** A reaction or a bare answer ("Never.", "Yes.", "That is frightening."): it leans on what was said before. */
const REACTION = /^["“]?(never|yes|no|yeah|yep|nope|exactly|absolutely|sure|right|indeed|true|correct|definitely|wow|hi|hello|thanks|thank you|great|good|that is|that's|this is|all the time)\b/iu
/** The opening sentence is a bare answer (one to three words) or a reaction. */
export const opensOnReaction = (text: string): boolean => {
  const first = text.split(/(?<=[.!?…])\s+/u)[0] ?? ""
  return (words(first).length <= 3 && /[.!?…]["”]?$/u.test(first)) || REACTION.test(first)
}

/**
 * Phrase `first` answers a question said before it: the phrase before it, past any bare answers
 * of the same speaker ("Pesticides." then "Pesticides sprayed in parks…"), is a question.
 */
const answersOutside = (phrases: ReadonlyArray<Phrase>, first: number): boolean => {
  let before = first - 1
  while (before >= 0 && phrases[before]!.speaker === phrases[first]!.speaker && opensOnReaction(phrases[before]!.text)) before--
  return before >= 0 && isQuestion(phrases[before]!.text)
}

const standalone = (text: string): boolean => {
  const first = firstWord(text)
  if (opensOnReaction(text)) return false
  if (first === "") return false
  if (HOOK_PATTERNS.some((p) => p.test(text.slice(0, 40)))) return true
  return !DANGLING.has(first) && /^[\p{Lu}\p{N}"“¿¡$]/u.test(text)
}

const mean = (vectors: ReadonlyArray<Float32Array>): Float32Array | undefined => {
  if (vectors.length === 0) return undefined
  const out = new Float32Array(vectors[0]!.length)
  for (const v of vectors) for (let i = 0; i < v.length; i++) out[i]! += v[i]!
  let norm = 0
  for (let i = 0; i < out.length; i++) norm += out[i]! * out[i]!
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0
  for (let i = 0; i < out.length; i++) out[i]! *= scale
  return out
}

interface Signal {
  readonly value: number
  readonly why: string
}

interface Span {
  readonly first: number
  readonly last: number
  readonly start: number
  readonly end: number
  readonly text: string
  readonly signals: Readonly<Record<CandidateKind, Signal>>
  readonly quality: number
  readonly qualityWhy: ReadonlyArray<string>
}

const none: Signal = { value: 0, why: "" }

const hookSignal = (phrases: ReadonlyArray<Phrase>): Signal => {
  const opening = phrases[0]!.text
  const pattern = HOOK_PATTERNS.findIndex((p) => p.test(opening))
  if (pattern >= 0) {
    const match = opening.match(HOOK_PATTERNS[pattern]!)!
    const early = clamp01(1 - (match.index ?? 0) / Math.max(opening.length, 1))
    return { value: 0.6 + 0.4 * early, why: `opens with a line that grabs attention (hook phrasing: "${match[0]}")` }
  }
  if (isQuestion(opening)) return { value: 0.6, why: "opens with a question that makes the listener curious" }
  if (NUMBER.test(words(opening).slice(0, 6).join(" "))) return { value: 0.5, why: "opens with a striking figure" }
  return none
}

const questionSignal = (phrases: ReadonlyArray<Phrase>): Signal => {
  const at = phrases.slice(0, 2).findIndex((p) => isQuestion(p.text))
  if (at < 0) return none
  const asked = phrases[at]!
  const answer = phrases.slice(at + 1)
  const answerSeconds = answer.length === 0 ? 0 : answer.at(-1)!.end - answer[0]!.start
  if (answer.length < 2 && answerSeconds < 6) return none
  if (answer.some((p) => isQuestion(p.text) && p === answer.at(-1))) return none
  const otherSpeaker = asked.speaker !== null && answer.some((p) => p.speaker !== null && p.speaker !== asked.speaker)
  const value = 0.55 + 0.3 * clamp01(answerSeconds / 20) + (otherSpeaker ? 0.15 : 0)
  return { value, why: `a question and its answer: answered in the next ${Math.round(answerSeconds)} s${otherSpeaker ? " by another speaker" : ""}` }
}

const insightSignal = (text: string, seconds: number): Signal => {
  if (FRAMING.test(text)) return none
  const figures = (text.match(new RegExp(NUMBER.source, "gi")) ?? []).length
  const reasons = (text.match(new RegExp(EXPLANATION.source, "gi")) ?? []).length
  if (figures + reasons < 2) return none
  const parts = [figures > 0 ? `${figures} figure${figures > 1 ? "s" : ""}` : "", reasons > 0 ? `${reasons} explanation${reasons > 1 ? "s" : ""} (because, which means…)` : ""]
    .filter((p) => p !== "")
  // Per 10 s, so that a longer span does not win by merely holding more of them.
  const density = (Math.min(figures, 6) + 1.5 * Math.min(reasons, 4)) / Math.max(1, seconds / 10)
  return { value: clamp01(0.3 + 0.25 * density), why: `explains with facts: ${parts.join(" and ")}` }
}

/**
 * The first sentence introduces the show or a guest ("Welcome back to…", "…my guest today is…",
 * "We have Oscar on the line."): framing, not a statement.
 */
const GREETING = /^["“]?good (morning|afternoon|evening)\b/iu
const FRAMING = {
  test: (text: string) => {
    const first = text.split(/(?<=[.!?])\s+/u)[0] ?? ""
    return GREETING.test(first) || INTRODUCTION.test(first)
  }
}

const quoteSignal = (phrases: ReadonlyArray<Phrase>, text: string, opens: boolean, ends: boolean): Signal => {
  if (!opens || !ends || phrases.some((p) => isQuestion(p.text)) || FRAMING.test(text)) return none
  const conviction = CONVICTION.test(text)
  const sentences = text.split(/(?<=[.!?])\s+/u).filter((s) => s !== "")
  const shortSentences = clamp01(1 - (words(text).length / Math.max(sentences.length, 1) - 12) / 20)
  return {
    value: 0.45 + (conviction ? 0.3 : 0) + 0.25 * shortSentences,
    why: conviction ? "a complete statement of what the speaker believes, understandable on its own" : "a complete statement, understandable on its own"
  }
}

export interface CandidateOptions {
  readonly kind: CandidateKind | "all"
  readonly limit?: number
}

/**
 * Candidates of a transcript, best first. `vectors[i]` is the unit sentence vector of
 * `phrases[i]` (same order), used for centrality; pass an empty array to leave centrality out
 * (it then counts 0.5).
 */
export const clipCandidates = (
  phrases: ReadonlyArray<Phrase>,
  vectors: ReadonlyArray<Float32Array>,
  options: CandidateOptions
): Array<ClipCandidate> => {
  const centroid = vectors.length === phrases.length ? mean(vectors) : undefined
  // Running sums of each phrase's cosine with the recording's mean: a span's centrality is the
  // mean over its phrases, so a longer span is not more central for being longer.
  const sums = [0]
  for (const v of vectors) {
    let d = 0
    for (let i = 0; i < v.length; i++) d += v[i]! * centroid![i]!
    sums.push(sums.at(-1)! + d)
  }
  const spanCentrality = (first: number, last: number): number =>
    centroid === undefined ? 0.5 : clamp01(((sums[last + 1]! - sums[first]!) / (last - first + 1) - 0.1) / 0.5)

  const spans: Array<Span> = []
  for (let first = 0; first < phrases.length; first++) {
    for (let last = first; last < phrases.length; last++) {
      const start = phrases[first]!.start
      const end = phrases[last]!.end
      const seconds = end - start
      if (seconds > candidateLengthLimits.max) break
      if (seconds < candidateLengthLimits.min) continue
      // Never open on the answer to a question left outside the span, nor on a reaction: the
      // span one phrase earlier holds the question with its answer.
      if (answersOutside(phrases, first)) break
      if (opensOnReaction(phrases[first]!.text)) break
      const inside = phrases.slice(first, last + 1)
      const text = inside.map((p) => p.text).join(" ")
      const opens = standalone(inside[0]!.text)
      // A span ending on a question ends on a set-up, not on a complete thought.
      const ends = completes(inside.at(-1)!.text) && !isQuestion(inside.at(-1)!.text)
      const centrality = spanCentrality(first, last)
      const speechSeconds = inside.reduce((a, p) => a + (p.end - p.start), 0)
      const rate = rateScore(words(text).length / Math.max(speechSeconds, 1))
      const prior = durationPrior(seconds)
      const clean = clamp01(1 - 10 * fillerShare(text))
      const quality = 0.2 * (opens ? 1 : 0) + 0.2 * (ends ? 1 : 0) + 0.25 * centrality + 0.1 * rate + 0.15 * prior + 0.1 * clean
      const qualityWhy = [
        opens ? "makes sense without what came before" : "",
        ends ? "ends when the thought is complete" : "",
        centrality >= 0.6 ? "on the recording's main subject" : "",
        rate >= 0.9 ? "lively delivery" : ""
      ].filter((w) => w !== "")
      const movesOn = inside.slice(1).some((p) => isQuestion(p.text)) ? 0.7 : 1
      const hook = hookSignal(inside)
      const insight = insightSignal(text, seconds)
      spans.push({
        first,
        last,
        start,
        end,
        text,
        signals: {
          hook: { ...hook, value: hook.value * movesOn },
          question: questionSignal(inside),
          insight: { ...insight, value: insight.value * movesOn },
          quote: quoteSignal(inside, text, opens, ends)
        },
        quality,
        qualityWhy
      })
    }
  }

  const kinds: ReadonlyArray<CandidateKind> = options.kind === "all" ? ["hook", "question", "insight", "quote"] : [options.kind]
  const scored = spans.flatMap((span) => {
    let best: { kind: CandidateKind; score: number } | undefined
    for (const kind of kinds) {
      const signal = span.signals[kind].value
      if (signal <= 0) continue
      const score = 0.45 * signal + 0.55 * span.quality
      if (best === undefined || score > best.score) best = { kind, score }
    }
    return best === undefined ? [] : [{ span, ...best }]
  }).sort((a, b) => b.score - a.score || a.span.start - b.span.start)

  const limit = options.limit ?? MAX_CANDIDATES
  const taken: Array<(typeof scored)[number]> = []
  for (const candidate of scored) {
    if (taken.length === limit) break
    if (taken.some((t) => candidate.span.start < t.span.end && candidate.span.end > t.span.start)) continue
    taken.push(candidate)
  }
  return taken.map(({ kind, score, span }) => ({
    start: round(span.start),
    end: round(span.end),
    text: span.text,
    kind,
    score: round(score),
    reason: [span.signals[kind].why, ...span.qualityWhy, `${Math.round(span.end - span.start)} s`].join("; ")
  }))
}
