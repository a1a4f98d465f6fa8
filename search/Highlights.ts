/**
 * Which words of a hit to mark for a question. Pure.
 *
 * A word is marked when it is a question word that is not a stop word, or an inflection
 * of one: the two differ only by an ending of number, person or past tense ("closes" ~
 * "close", "libraries" ~ "library", "opened" ~ "open", "mercados" ~ "mercado", "frescas"
 * ~ "fresco"). Not by any tail: "Marketing" is another word than "market" (a raw shared
 * prefix marked it, and counted it towards a hit's lexical relevance). Semantic hits may
 * mark nothing: the point of them is that they match without sharing words.
 */

/** [start, end) character offsets into the hit's text. */
export type Highlight = readonly [start: number, end: number]

// Function words of the languages the quality test covers (English, Spanish); a missing
// one only costs a superfluous highlight.
const englishStopWords = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have how i if in into is it its " +
    "me my no not of on or our so than that the their them then there these they this to was we were what when " +
    "where which who whom why will with would you your about after again all also any because before being both " +
    // Modal and auxiliary verbs and quantifiers (Postgres's English stop words): "should"
    // as a content word made "should I expect a downpour this evening" match 2,260 of 100k
    // passages with "evening" alone, all read to be ranked.
    "should shall may might must does doing done am he him his she her those each few more most other some such " +
    "only own same too very just"
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
  const words = foldedWords(q)
  const en = words.filter((w) => englishStopWords.has(w) && !spanishStopWords.has(w)).length
  const es = words.filter((w) => spanishStopWords.has(w) && !englishStopWords.has(w)).length
  return es > en ? "es" : en > es ? "en" : undefined
}

const withoutPossessive = (word: string): string => word.replace(/['’]s$/, "")

/** A word: letters and digits, with an apostrophe's tail ("don't"). */
export const wordPattern = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu

/** The text's words (`wordPattern`), folded. */
export const foldedWords = (text: string): Array<string> => Array.from(text.matchAll(wordPattern), (m) => foldWord(m[0]))

/** The question's content words, folded (lower case, no accents), possessives as their word ("company's" → "company"). */
export const queryTerms = (q: string): ReadonlyArray<string> =>
  Array.from(
    new Set(
      Array.from(q.matchAll(wordPattern), (m) => withoutPossessive(foldWord(m[0]))).filter((w) => w.length >= 3 && !stopWords.has(w))
    )
  )

const commonPrefix = (a: string, b: string): number => {
  let n = 0
  while (n < a.length && n < b.length && a[n] === b[n]) n++
  return n
}

/**
 * Whether two endings after a shared stem are inflections of one word. "-ing" and "-er"
 * are not among them: they make new words as often as forms ("marketing", "evening",
 * "marker"), so "build" and "building" are not matched here (Postgres's stemmer still
 * finds them for ranking). A stem shorter than 4 letters takes only a plural ("day" ~
 * "days", "city" ~ "cities"): "win" is not "wind", "car" not "cared".
 */
const sameWord = (stem: string, a: string, b: string): boolean => {
  const only = (...endings: ReadonlyArray<string>) => endings.includes(a) && endings.includes(b)
  if (only("", "s", "es")) return stem.length >= 3
  if (only("y", "ies")) return stem.length >= 3
  // Past tense: "-d" only after a stem ending in "e" ("closed"; "wind" is not "win" + d).
  if (only("", "s", "es", "d", "ed")) return stem.length >= 4 && (!(a === "d" || b === "d") || stem.endsWith("e"))
  if (only("y", "ies", "ied")) return stem.length >= 4
  // Spanish gender and number ("fresco", "frescas").
  if (only("o", "a", "os", "as")) return stem.length >= 4
  return false
}

/** `word` is the (folded) question term itself or an inflection of it (see `sameWord`). */
export const termMatches = (term: string, word: string): boolean => {
  // A possessive is its word ("company's" ~ "company", "Tom's" ~ "tom").
  const t = withoutPossessive(term)
  const w = withoutPossessive(word)
  if (t === w) return true
  const shared = commonPrefix(t, w)
  return sameWord(t.slice(0, shared), t.slice(shared), w.slice(shared))
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
