/**
 * A hit's `relevance`: 0..1, the same scale for every question (unlike the rank-fusion
 * `score`, whose size depends on the lists of one answer). Pure.
 *
 * Two pieces of evidence, the stronger counts:
 * - semantic: the cosine similarity of the question's and the hit text's MiniLM embeddings,
 *   mapped through a logistic curve fixed on the project's own library
 *   (test/search/library-quality.test.ts: right top hits of paraphrased questions against
 *   the top hits of questions the library cannot answer; figures in search/README.md);
 * - lexical: the share of the question's content words found in the hit (the words or
 *   their inflections, as highlights: "Marketing" does not count for "market"): a hit
 *   holding all of them (two or more) is at least 0.75. One shared
 *   word of four says nothing ("crash" in "stock market crash in Tokyo"), so partial
 *   coverage adds nothing.
 *
 * A question that names something ("Tokyo", "the Eiffel Tower": words written with a capital
 * other than its first) is not answered by a hit that names none of it, whatever their
 * cosine: such a hit's semantic midpoint is raised by `NAME_MISSING_MARGIN`. Measured
 * (2026-11-26, session 12): MiniLM int8 gives slightly different vectors by CPU (an AVX2
 * machine without VNNI against the one the midpoint was fixed on), and there "stock market
 * crash in Tokyo" → "…postpone the launch by one week so the crash can be fixed" came out at
 * cosine 0.407, above two right hits (0.392, 0.402): cosine alone cannot separate them there.
 * Only capitals count: a question typed all in lower case names nothing.
 */
import { foldedWords, foldWord, queryTerms, questionLanguage, termMatches, wordPattern } from "./Highlights.ts"

/**
 * Cosine at which relevance is 0.5, and the logistic's width (cosine units). Measured on
 * the quality library: right top hits of English questions have cosines 0.394–0.643,
 * top hits of unanswerable ones 0.07–0.387 (and 0.442 for "chocolate cake recipe" → a
 * lemon cake recipe). MiniLM places any two Spanish sentences close (an unrelated
 * Spanish hit: 0.48–0.55; right ones 0.585–0.661), so a question recognised as not
 * English has its own midpoint.
 */
export const COSINE_MIDPOINT = 0.39
export const COSINE_MIDPOINT_OTHER_LANGUAGE = 0.56
export const COSINE_WIDTH = 0.04
/** Midpoint raise for a hit naming none of the question's names (see above). */
export const NAME_MISSING_MARGIN = 0.05
/** Relevance of a hit holding every content word of a question of two or more. */
export const ALL_WORDS_RELEVANCE = 0.75

export const semanticRelevance = (cosine: number, midpoint = COSINE_MIDPOINT): number =>
  1 / (1 + Math.exp(-(cosine - midpoint) / COSINE_WIDTH))

/** Share of the question's content words the text holds; 0 for a question without any. */
export const termCoverage = (q: string, text: string): number => {
  const terms = queryTerms(q)
  if (terms.length === 0) return 0
  const words = Array.from(text.matchAll(/[\p{L}\p{N}]+/gu), (m) => foldWord(m[0]))
  return terms.filter((t) => words.some((w) => termMatches(t, w))).length / terms.length
}

/**
 * The question's names: its words written with a capital letter, except the first word (a
 * sentence's capital) and "I", folded.
 */
export const namesOf = (q: string): ReadonlyArray<string> =>
  Array.from(q.matchAll(wordPattern))
    .slice(1)
    .map((m) => m[0])
    .filter((w) => w !== "I" && /^\p{Lu}/u.test(w))
    .map(foldWord)

/** Whether the text (or its speaker's label) holds one of the question's names, or the question names nothing. */
export const namesMet = (q: string, text: string, speaker: string | null = null): boolean => {
  const names = namesOf(q)
  if (names.length === 0) return true
  const words = foldedWords(`${text} ${speaker ?? ""}`)
  return names.some((n) => words.some((w) => termMatches(n, w)))
}

export const relevanceOf = (q: string, text: string, cosine: number, speaker: string | null = null): number => {
  const midpoint = (questionLanguage(q) === "es" ? COSINE_MIDPOINT_OTHER_LANGUAGE : COSINE_MIDPOINT) +
    (namesMet(q, text, speaker) ? 0 : NAME_MISSING_MARGIN)
  const lexical = queryTerms(q).length >= 2 && termCoverage(q, text) === 1 ? ALL_WORDS_RELEVANCE : 0
  return Math.round(Math.max(semanticRelevance(cosine, midpoint), lexical) * 1000) / 1000
}
