/**
 * Key phrase candidates and their ranking.
 *
 * Candidates are noun phrases of 1–3 words by part of speech (adjectives and nouns ending on a
 * noun, `extractCandidates`), of content words (no stop word, no number, at least 3 letters per
 * word), never across a sentence end or a comma. Singular and plural are one candidate (`stem`
 * strips plural endings); its display form is the form said most often.
 *
 * Ranking: `0.6 · similarity + 0.4 · frequency`, both rescaled to 0..1 over the candidates,
 * where similarity is the cosine between the phrase's embedding and the document's and
 * frequency is `ln(1 + count)`. Picking is MMR (λ = 0.65) over phrase embeddings, and a
 * phrase sharing a word (by stem) with one already picked is skipped, so "erosion" and
 * "coastal erosion" do not both appear; a picked phrase gives way to a longer candidate
 * containing it that scores at least 90 % of it ("coastal" → "coastal erosion").
 */
import { clauseBreaks, type Sentence } from "./Sentences.ts"
import { STOPWORDS } from "./Stopwords.ts"
import { mmr } from "./Mmr.ts"
import { type Pos, tagTokens } from "./PartOfSpeech.ts"
import { dot, minMax } from "./Vectors.ts"

export interface PhraseOccurrence {
  readonly sentence: number
  readonly start: number
  readonly end: number
}

export interface Candidate {
  /** Stemmed words joined by spaces: the identity of the candidate. */
  readonly key: string
  /** The surface form said most often (lower case). */
  readonly phrase: string
  readonly stems: ReadonlyArray<string>
  readonly occurrences: ReadonlyArray<PhraseOccurrence>
}

export const stem = (word: string): string => {
  if (word.length > 4 && word.endsWith("ies")) return word.slice(0, -3) + "y"
  if (word.length > 4 && /(?:ss|x|z|ch|sh)es$/.test(word)) return word.slice(0, -2)
  if (word.length > 3 && word.endsWith("s") && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1)
  return word
}

const isContentWord = (token: string): boolean =>
  !STOPWORDS.has(token) && /^\p{L}[\p{L}'\-]*$/u.test(token) && token.replace(/['\-]/g, "").length >= 3

const isNoun = (pos: Pos | undefined) => pos === "noun" || pos === "proper"

/**
 * Candidates are noun phrases by part of speech (`PartOfSpeech.ts`): adjectives and nouns
 * ending on a noun ("coastal erosion", "broken toasters"), so verbs ("fixing a radio", "we
 * meet"), participles in front of a noun ("our changing shores") and lone adjectives
 * ("expensive") are not topics. `exclude`: words that never enter a phrase (the speakers'
 * names: people are not topics). Phrases of 3 words said only once are dropped: mostly a run
 * across a phrase boundary where the tagger takes a verb for a noun ("rainwater tank matters",
 * "studies coastal erosion"; keeping them took the quality set's precision from 30/32 to
 * 28/32). So is a lone proper noun said once inside a sentence ("including one from Berlin",
 * "next Tuesday"): an instance, not what the recording is about.
 */
export const extractCandidates = (
  sentences: ReadonlyArray<Sentence>,
  exclude: ReadonlySet<string> = new Set(),
  maxWords = 3
): Array<Candidate> => {
  const byKey = new Map<
    string,
    {
      stems: Array<string>
      forms: Map<string, number>
      occurrences: Array<PhraseOccurrence>
      before: Array<string>
      after: Array<string>
      /** Occurrences as a proper noun inside a sentence (not its first word). */
      named: number
    }
  >()
  for (const sentence of sentences) {
    const { tokens, tokenTimes } = sentence
    const breaks = clauseBreaks(sentence.text)
    const pos = tagTokens(sentence.text, tokens)
    for (let i = 0; i < tokens.length; i++) {
      for (let n = 1; n <= maxWords && i + n <= tokens.length; n++) {
        const last = tokens[i + n - 1]!
        if (!isContentWord(last) || exclude.has(last) || (n > 1 && breaks.has(i + n - 2))) break
        if (!isNoun(pos[i + n - 1]) && pos[i + n - 1] !== "adjective") break
        // An adjective may open a phrase but not end one.
        if (!isNoun(pos[i + n - 1])) continue
        const words = tokens.slice(i, i + n)
        const stems = words.map(stem)
        const key = stems.join(" ")
        const form = words.join(" ")
        let entry = byKey.get(key)
        if (entry === undefined) {
          entry = { stems, forms: new Map(), occurrences: [], before: [], after: [], named: 0 }
          byKey.set(key, entry)
        }
        entry.forms.set(form, (entry.forms.get(form) ?? 0) + 1)
        entry.before.push(i > 0 ? tokens[i - 1]! : "")
        entry.after.push(tokens[i + n] ?? "")
        if (i > 0 && pos[i + n - 1] === "proper") entry.named++
        entry.occurrences.push({ sentence: sentence.index, start: tokenTimes[i]![0], end: tokenTimes[i + n - 1]![1] })
      }
    }
  }
  return [...byKey.entries()].filter(([, e]) =>
    (e.stems.length < 3 || e.occurrences.length > 1) &&
    !(e.stems.length === 1 && (GENERIC.has(e.stems[0]!) || TIMES.has(e.stems[0]!) || AMOUNTS.has(e.stems[0]!))) &&
    !(e.stems.length === 1 && e.occurrences.length === 1 && e.named === 1) &&
    !taggedAsNounWrongly(e.stems, e.before, e.after)
  ).map(([key, e]) => ({
    key,
    stems: e.stems,
    phrase: [...e.forms.entries()].sort((a, b) => b[1] - a[1])[0]![0],
    occurrences: e.occurrences
  }))
}

/**
 * Nouns too general to be a topic on their own, or the show's own framing ("people bring…",
 * "my guest is…"); with a modifier they may be one ("spare part").
 */
const GENERIC = new Set([
  "people", "person", "part", "place", "look", "kind", "lot", "end", "side", "bit", "guest", "show", "episode", "programme",
  "program", "listener", "line"
])
/**
 * Times of day and calendar units are not topics on their own ("in a single night", "every
 * week"); inside a phrase they may be ("night trains", "thursday afternoon").
 */
const TIMES = new Set([
  "night", "day", "morning", "afternoon", "evening", "week", "weekend", "month", "year", "today", "tonight", "tomorrow",
  "yesterday", "hour", "minute", "time", "moment"
])
/** Shares and fractions are figures, not topics ("a quarter of it"). */
const AMOUNTS = new Set(["quarter", "half", "third", "percent", "dozen", "couple", "number", "amount", "total"])
/**
 * Words after which a word is a verb ("we meet", "let us schedule", "will water"); not "to",
 * which before a noun is a preposition ("moved to Berlin"), and whose verbs the tagger tells.
 */
const VERB_CUES = new Set([
  "i", "you", "we", "they", "he", "she", "it", "will", "would", "can", "could", "should", "must", "may", "might",
  "not", "did", "do", "does", "don't", "didn't", "let", "us", "also", "just", "never", "often", "always", "who"
])
const AMOUNT_CUES = new Set(["about", "around", "almost", "nearly", "roughly", "over", "under"])

/**
 * Where the tagger is measured to call a verb a noun (test/quality, each test on at least half
 * of the candidate's occurrences): a lone word after a pronoun or modal ("let us
 * schedule a meeting"), and a phrase before a figure or an amount ("a sleeper cabin costs around
 * 90 euros", "the whole system costs $9,000"), which the tagger reads as a plural noun.
 */
const taggedAsNounWrongly = (stems: ReadonlyArray<string>, before: ReadonlyArray<string>, after: ReadonlyArray<string>): boolean => {
  const mostly = (words: ReadonlyArray<string>, test: (w: string) => boolean) => words.filter(test).length * 2 >= words.length
  if (stems.length === 1 && mostly(before, (w) => VERB_CUES.has(w))) return true
  return mostly(after, (w) => /^[$€£]?\d/.test(w) || AMOUNT_CUES.has(w))
}

/** Words that, before a capitalised word, mark it as a person's name ("Hello Tom", "Doctor Clarke"). */
const NAME_CUES = new Set(["hello", "hi", "hey", "thanks", "thank", "dear", "doctor", "dr", "mr", "mrs", "ms", "miss", "professor", "prof"])

/**
 * First names said in the recording, without a name list: a capitalised word addressed with a
 * comma ("Tom, do guests…", "…, Tom?"), or after a greeting or a title ("Hello Martin",
 * "Doctor Clarke"), or a capitalised word joined to one of those by "and" ("Tom and Grace").
 * Lower case, for excluding from key phrases: people are not topics.
 */
export const addressedNames = (sentences: ReadonlyArray<Sentence>): Set<string> => {
  const names = new Set<string>()
  const pairs: Array<readonly [string, string]> = []
  for (const { text } of sentences) {
    for (const m of text.matchAll(/(?:^|[,.!?]\s+)(\p{Lu}\p{Ll}+),\s/gu)) names.add(m[1]!.toLowerCase())
    for (const m of text.matchAll(/,\s+(\p{Lu}\p{Ll}+)[?.!]/gu)) names.add(m[1]!.toLowerCase())
    for (const m of text.matchAll(/\b(\p{L}+)\.?\s+(\p{Lu}\p{Ll}+)\b/gu)) {
      if (NAME_CUES.has(m[1]!.toLowerCase())) names.add(m[2]!.toLowerCase())
    }
    for (const m of text.matchAll(/\b(\p{Lu}\p{Ll}+) and (\p{Lu}\p{Ll}+)\b/gu)) pairs.push([m[1]!.toLowerCase(), m[2]!.toLowerCase()])
  }
  for (const [a, b] of pairs) {
    if (names.has(a)) names.add(b)
    if (names.has(b)) names.add(a)
  }
  // A sentence-opening word followed by a comma may be an ordinary word ("Today, …", "Well, …").
  for (const w of names) if (STOPWORDS.has(w)) names.delete(w)
  return names
}

/**
 * At most `limit` candidates worth embedding: the most frequent first, longer phrases before
 * shorter ones at equal count, then the earliest said.
 */
export const pruneCandidates = (candidates: ReadonlyArray<Candidate>, limit: number): Array<Candidate> =>
  [...candidates]
    .sort((a, b) =>
      b.occurrences.length - a.occurrences.length ||
      b.stems.length - a.stems.length ||
      a.occurrences[0]!.start - b.occurrences[0]!.start
    )
    .slice(0, limit)

const SIMILARITY_WEIGHT = 0.6
/** A longer phrase replaces a picked one it contains when it scores at least this share of it. */
const LONGER_FORM_SHARE = 0.85

const contains = (outer: ReadonlyArray<string>, inner: ReadonlyArray<string>) => {
  for (let at = 0; at + inner.length <= outer.length; at++) {
    if (inner.every((s, k) => outer[at + k] === s)) return true
  }
  return false
}

/** The best-scoring longer candidate containing candidate `i` ("coastal" → "coastal erosion"), if close enough. */
const longerForm = (
  candidates: ReadonlyArray<Candidate>,
  score: ReadonlyArray<number>,
  i: number,
  free: (j: number) => boolean
): number | undefined => {
  let best: number | undefined
  candidates.forEach((c, j) => {
    if (c.stems.length <= candidates[i]!.stems.length || !contains(c.stems, candidates[i]!.stems) || !free(j)) return
    if (score[j]! < LONGER_FORM_SHARE * score[i]!) return
    if (best === undefined || score[j]! > score[best]!) best = j
  })
  return best
}

export interface RankedPhrase {
  readonly candidate: Candidate
  /** Ranking score rescaled so the first phrase has 1. */
  readonly weight: number
}

export const rankPhrases = (
  candidates: ReadonlyArray<Candidate>,
  vectors: ReadonlyArray<Float32Array>,
  document: Float32Array,
  k: number,
  similarityWeight = SIMILARITY_WEIGHT
): Array<RankedPhrase> => {
  if (candidates.length === 0) return []
  const similarity = minMax(vectors.map((v) => dot(v, document)))
  // Relative to the most frequent, not min-max: in a short recording, said twice against once
  // must not outweigh what the phrase means (min-max made it the whole 0.4).
  const counts = candidates.map((c) => Math.log(1 + c.occurrences.length))
  const most = Math.max(...counts)
  const frequency = counts.map((c) => c / most)
  const score = candidates.map((_, i) => similarityWeight * similarity[i]! + (1 - similarityWeight) * frequency[i]!)
  const order = mmr(score, (i, j) => dot(vectors[i]!, vectors[j]!), candidates.length, 0.65)
  const picked: Array<number> = []
  const usedStems = new Set<string>()
  const free = (i: number) => !candidates[i]!.stems.some((s) => usedStems.has(s))
  for (const i of order) {
    if (picked.length >= k) break
    if (!free(i)) continue
    const chosen = longerForm(candidates, score, i, free) ?? i
    picked.push(chosen)
    for (const s of candidates[chosen]!.stems) usedStems.add(s)
  }
  const top = Math.max(...picked.map((i) => score[i]!), 1e-9)
  return picked.map((i) => ({ candidate: candidates[i]!, weight: Math.max(0, score[i]!) / top }))
}
