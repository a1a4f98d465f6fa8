/**
 * Checks of LLM output against the transcript:
 * - a quote (evidence) must occur verbatim in the transcript, compared on lower-cased words
 *   (punctuation and spacing ignored, as ASR punctuation is not something to quote exactly);
 *   it is located in the sentences it spans, which give it times and a speaker;
 * - names must appear in the transcript: every capitalised word of a generated text that is
 *   not its first word (or is its first word followed by another capitalised word, "Mike
 *   Jones says…") must be a word of the transcript, case-insensitively ("I", "I'm"… excepted);
 *   in titles every capitalised word that is not a stop word.
 */
import { stem } from "./KeyPhrases.ts"
import { type Sentence, tokenize } from "./Sentences.ts"
import { STOPWORDS } from "./Stopwords.ts"

export interface Located {
  readonly start: number
  readonly end: number
  readonly speaker: string | null
}

export interface TranscriptIndex {
  /** Stems (`KeyPhrases.stem`) of the transcript's words. */
  readonly stems: ReadonlySet<string>
  /** Finds `quote` in the transcript; null when it does not occur verbatim (or has under 3 words). */
  locate(quote: string): Located | null
}

export const indexTranscript = (sentences: ReadonlyArray<Sentence>): TranscriptIndex => {
  const tokens: Array<string> = []
  const owner: Array<number> = []
  const position: Array<number> = []
  sentences.forEach((s, i) => {
    s.tokens.forEach((t, k) => {
      tokens.push(t)
      owner.push(i)
      position.push(k)
    })
  })
  const stems = new Set(tokens.map(stem))
  const locate = (quote: string): Located | null => {
    const needle = tokenize(quote)
    if (needle.length < 3) return null
    for (let at = 0; at + needle.length <= tokens.length; at++) {
      if (!needle.every((w, k) => tokens[at + k] === w)) continue
      const first = sentences[owner[at]!]!
      const last = sentences[owner[at + needle.length - 1]!]!
      return {
        start: first.tokenTimes[position[at]!]![0],
        end: last.tokenTimes[position[at + needle.length - 1]!]![1],
        speaker: first.speaker
      }
    }
    return null
  }
  return { stems, locate }
}

/**
 * Capitalised words of `text` that look like names and are not words of the transcript
 * (compared by stem, so "Walls" matches "wall"; stop words are never taken for names).
 * `titleCase`: the first word is checked too (titles capitalise common words).
 */
export const ungroundedNames = (text: string, index: TranscriptIndex, titleCase = false): Array<string> => {
  const missing: Array<string> = []
  for (const sentence of text.split(/(?<=[.?!])\s+/)) {
    const words = sentence.match(/[\p{L}\p{N}]+(?:['’\-][\p{L}\p{N}]+)*/gu) ?? []
    words.forEach((word, k) => {
      if (!/^\p{Lu}/u.test(word) || /^I(?:['’]|$)/.test(word)) return
      const lower = word.toLowerCase().replace(/’/g, "'").replace(/'s$/, "")
      if (STOPWORDS.has(lower) || (!titleCase && k === 0 && !/^\p{Lu}/u.test(words[1] ?? ""))) return
      if (!index.stems.has(stem(lower))) missing.push(word)
    })
  }
  return missing
}
