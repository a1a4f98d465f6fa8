/**
 * Which words of a hit to mark for a question. Pure.
 *
 * A word is marked when it shares a long prefix with a question word that is not a
 * stop word (a crude stemmer that works across languages: "closes" ~ "close",
 * "libraries" ~ "library", "mercados" ~ "mercado"). Semantic hits may mark nothing:
 * the point of them is that they match without sharing words.
 */

/** [start, end) character offsets into the hit's text. */
export type Highlight = readonly [start: number, end: number]

// Function words of the languages the quality test covers (English, Spanish); a missing
// one only costs a superfluous highlight.
const englishStopWords = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have how i if in into is it its " +
    "me my no not of on or our so than that the their them then there these they this to was we were what when " +
    "where which who whom why will with would you your about after again all also any because before being both"
  ).split(" ")
)
const spanishStopWords = new Set(
  (
    "a de del el la las los un una unos unas y o en por para con sin que cuando donde como es son al lo se su " +
    "sus le les mi tu muy mas hay esta este esto ese esa puedo puede"
  ).split(" ")
)
const stopWords = new Set([...englishStopWords, ...spanishStopWords])

export const foldWord = (word: string): string => word.normalize("NFD").replace(/\p{Mn}/gu, "").toLowerCase()

/**
 * "en" or "es" when the question's function words say so, else undefined. The embedding
 * model is English-only, so for a question in another language the full-text match is
 * the evidence that counts.
 */
export const questionLanguage = (q: string): "en" | "es" | undefined => {
  const words = Array.from(q.matchAll(wordPattern), (m) => foldWord(m[0]))
  const en = words.filter((w) => englishStopWords.has(w) && !spanishStopWords.has(w)).length
  const es = words.filter((w) => spanishStopWords.has(w) && !englishStopWords.has(w)).length
  return es > en ? "es" : en > es ? "en" : undefined
}

/** A word: letters and digits, with an apostrophe's tail ("don't"). */
export const wordPattern = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu

/** The question's content words, folded (lower case, no accents). */
export const queryTerms = (q: string): ReadonlyArray<string> =>
  Array.from(new Set(Array.from(q.matchAll(wordPattern), (m) => foldWord(m[0])).filter((w) => w.length >= 3 && !stopWords.has(w))))

const commonPrefix = (a: string, b: string): number => {
  let n = 0
  while (n < a.length && n < b.length && a[n] === b[n]) n++
  return n
}

export const termMatches = (term: string, word: string): boolean => {
  if (term === word) return true
  const shared = commonPrefix(term, word)
  return shared >= 4 && shared >= Math.min(term.length, word.length) - 2
}

export const highlights = (text: string, terms: ReadonlyArray<string>): ReadonlyArray<Highlight> => {
  if (terms.length === 0) return []
  const out: Array<Highlight> = []
  for (const match of text.matchAll(wordPattern)) {
    const word = foldWord(match[0])
    if (terms.some((t) => termMatches(t, word))) out.push([match.index, match.index + match[0].length])
  }
  return out
}
