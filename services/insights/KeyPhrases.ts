/**
 * Key phrase candidates and their ranking.
 *
 * Candidates are the 1–3 word n-grams inside runs of content words (no stop word, no number,
 * at least 3 letters per word, never across a sentence end or a comma). Singular and plural are one
 * candidate (`stem` strips plural endings); its display form is the form said most often.
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

/**
 * `exclude`: words that never enter a phrase (the speakers' names: people are not topics).
 * Phrases of 3 words said only once are dropped: without a part-of-speech tagger they are
 * mostly a run of content words across a phrase boundary ("volunteers plant dune").
 */
export const extractCandidates = (
  sentences: ReadonlyArray<Sentence>,
  exclude: ReadonlySet<string> = new Set(),
  maxWords = 3
): Array<Candidate> => {
  const byKey = new Map<
    string,
    { stems: Array<string>; forms: Map<string, number>; occurrences: Array<PhraseOccurrence>; before: Array<string>; after: Array<string> }
  >()
  for (const sentence of sentences) {
    const { tokens, tokenTimes } = sentence
    const breaks = clauseBreaks(sentence.text)
    for (let i = 0; i < tokens.length; i++) {
      for (let n = 1; n <= maxWords && i + n <= tokens.length; n++) {
        const last = tokens[i + n - 1]!
        if (!isContentWord(last) || exclude.has(last) || (n > 1 && breaks.has(i + n - 2))) break
        const words = tokens.slice(i, i + n)
        const stems = words.map(stem)
        const key = stems.join(" ")
        const form = words.join(" ")
        let entry = byKey.get(key)
        if (entry === undefined) {
          entry = { stems, forms: new Map(), occurrences: [], before: [], after: [] }
          byKey.set(key, entry)
        }
        entry.forms.set(form, (entry.forms.get(form) ?? 0) + 1)
        entry.before.push(i > 0 ? tokens[i - 1]! : "")
        entry.after.push(tokens[i + n] ?? "")
        entry.occurrences.push({ sentence: sentence.index, start: tokenTimes[i]![0], end: tokenTimes[i + n - 1]![1] })
      }
    }
  }
  return [...byKey.entries()].filter(([, e]) =>
    (e.stems.length < 3 || e.occurrences.length > 1) && !e.stems.some((w) => GENERIC.has(w)) &&
    !(e.stems.length === 1 && (TIMES.has(e.stems[0]!) || AMOUNTS.has(e.stems[0]!))) && !usedAsVerb(e.stems, e.before, e.after) &&
    !modifierOnly(e.after) && !e.stems.some((w) => COMMON_VERBS.has(w)) && !(e.stems.length === 1 && /ly$/.test(e.stems[0]!) && !LY_NOUNS.has(e.stems[0]!))
  ).map(([key, e]) => ({
    key,
    stems: e.stems,
    phrase: [...e.forms.entries()].sort((a, b) => b[1] - a[1])[0]![0],
    occurrences: e.occurrences
  }))
}

/** Nouns too general to be a topic, or the show's own framing ("people bring…", "my guest is…"). */
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
/**
 * Frequent verbs and their irregular participles, which the neighbour rules miss ("people bring
 * broken toasters" gave "bring broken"). A lone -ly word is an adverb or adjective ("lovely").
 */
const COMMON_VERBS = new Set([
  "bring", "brought", "take", "took", "taken", "make", "made", "get", "got", "gotten", "give", "gave", "given", "put", "keep",
  "kept", "come", "came", "go", "went", "gone", "say", "said", "tell", "told", "know", "knew", "known", "think", "thought",
  "want", "seem", "feel", "felt", "try", "broken", "break", "broke", "begin", "began", "begun", "become", "became"
])
/** Nouns ending in -ly, which the lone -ly rule keeps. */
const LY_NOUNS = new Set([
  "family", "supply", "assembly", "italy", "july", "rally", "reply", "ally", "anomaly", "monopoly", "butterfly", "belly",
  "jelly", "lily", "bully", "fly", "homily", "panoply", "doily", "gully", "folly", "holly"
])
/** Shares and fractions are figures, not topics ("a quarter of it"). */
const AMOUNTS = new Set(["quarter", "half", "third", "percent", "dozen", "couple", "number", "amount", "total"])
/**
 * A phrase said several times and always followed by the same content word is the front of a
 * longer one whose head it lacks ("solar" of "solar panels"). Said once, the next word tells
 * nothing (measured on test/quality: counting single mentions dropped "dune volunteers").
 */
const modifierOnly = (after: ReadonlyArray<string>): boolean =>
  after.length > 1 && after.every((w) => w === after[0]) && isContentWord(after[0]!)
/** Words after which a word is a verb ("we meet", "to fix", "it keeps", "will water"). */
const VERB_CUES = new Set([
  "i", "you", "we", "they", "he", "she", "it", "to", "will", "would", "can", "could", "should", "must", "may", "might",
  "not", "did", "do", "does", "don't", "didn't", "let", "us", "also", "just", "never", "often", "always", "who"
])
/** Before a past form, a determiner makes it an adjective ("a shared cabin"), otherwise a verb ("the installer counted"). */
const DETERMINERS = new Set(["a", "an", "the", "our", "their", "his", "her", "its", "my", "your", "this", "that", "these", "those", "some", "every"])

/**
 * Without a part-of-speech tagger, verbs by their neighbours (each test on at least half of the
 * candidate's occurrences): a word after a pronoun, modal or "to" ("we meet", "it keeps"); a
 * phrase after a subject pronoun or before an object or a figure ("volunteers fix them"); a
 * past form (-ed) other than right after a determiner ("installer counted", "agreed"). Not topics.
 */
const usedAsVerb = (stems: ReadonlyArray<string>, before: ReadonlyArray<string>, after: ReadonlyArray<string>): boolean => {
  const mostly = (words: ReadonlyArray<string>, test: (w: string) => boolean) => words.filter(test).length * 2 >= words.length
  if (stems.length === 1 && mostly(before, (w) => VERB_CUES.has(w))) return true
  // A lone -s form before an amount, a figure or an object is a verb ("the system costs $9,000",
  // "it takes about 14 hours"); a plural noun rarely is ("panels on", "the solar panels, the installer").
  if (stems.length === 1 && mostly(after, (w) => /^[$€£]?\d/.test(w) || AMOUNT_CUES.has(w))) return true
  // A phrase after a subject pronoun opens on a verb ("it keeps electronic…").
  if (stems.length > 1 && mostly(before, (w) => SUBJECTS.has(w))) return true
  // A phrase followed by an object, an amount or a figure ends on a verb ("volunteers fix them",
  // "cabin costs around 90", "installer comes next Tuesday").
  if (stems.length > 1 && mostly(after, (w) => OBJECTS.has(w) || /^\d/.test(w))) return true
  // A past form (-ed) not right after a determiner is a verb ("installer counted", "agreed"), not "a shared cabin".
  return stems.some((w, k) => w.length > 4 && w.endsWith("ed") && (k > 0 || !before.some((b) => DETERMINERS.has(b))))
}
const AMOUNT_CUES = new Set(["about", "around", "almost", "nearly", "roughly", "over", "under"])
const SUBJECTS = new Set(["i", "you", "we", "they", "he", "she", "it", "who"])
const OBJECTS = new Set(["them", "it", "us", "me", "him", "her", "you", "back", "out", "up", "down", "off", "around", "about", "almost", "nearly", "next", "every", "a", "an", "the", "our", "their", "his", "its", "my", "your"])

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
