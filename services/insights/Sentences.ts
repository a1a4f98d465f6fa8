/**
 * Timed sentences out of a transcript's segments: the unit every insight is built from.
 *
 * Segments are phrases, not sentences: a sentence may run over several segments and a segment
 * may hold several sentences. Consecutive segments of one speaker are joined and cut at
 * sentence-ending punctuation (". ", "? ", "! " before an upper-case letter, a digit or a quote,
 * except after a known abbreviation such as "Dr."); a change of speaker always ends a sentence.
 * Text without punctuation is cut at segment ends once a sentence passes `MAX_WORDS`, and at
 * `MAX_WORDS` words inside a single long segment.
 *
 * Times: a character's time comes from its word when the segment carries word times, otherwise
 * it is interpolated linearly over the segment by character offset. A sentence's start and end
 * therefore always lie inside the segments it was cut from.
 */
import type { Segment } from "../../src/contract/domain/Transcript.ts"

export interface Sentence {
  /** Position in spoken order. */
  readonly index: number
  /** Verbatim text (trimmed). */
  readonly text: string
  readonly start: number
  readonly end: number
  readonly speaker: string | null
  /** Lower-case word tokens (letters, digits, inner apostrophes and hyphens). */
  readonly tokens: ReadonlyArray<string>
  /** Start and end time of each token, parallel to `tokens`. */
  readonly tokenTimes: ReadonlyArray<readonly [number, number]>
}

/** Sentences longer than this are cut (text without punctuation). */
export const MAX_WORDS = 60

const ABBREVIATIONS = new Set([
  "dr", "mr", "mrs", "ms", "prof", "st", "sr", "jr", "vs", "etc", "e.g", "i.e", "no", "mt", "u.s", "approx", "inc", "ltd", "co"
])

const TOKEN = /[\p{L}\p{N}]+(?:['’\-][\p{L}\p{N}]+)*/gu

/** Number of word tokens in a text. */
export const countWords = (text: string): number => text.match(TOKEN)?.length ?? 0

export const tokenize = (text: string): Array<string> => (text.match(TOKEN) ?? []).map((t) => t.toLowerCase().replace(/’/g, "'"))

/**
 * Token positions followed by a comma, semicolon, colon or dash before the next token: a phrase
 * does not run across them ("toasters, lamps and radios" holds no phrase "toasters lamps").
 */
export const clauseBreaks = (text: string): Set<number> => {
  const breaks = new Set<number>()
  let index = -1
  let previousEnd = 0
  for (const m of text.matchAll(TOKEN)) {
    if (index >= 0 && /[,;:–—]|\s-\s/.test(text.slice(previousEnd, m.index))) breaks.add(index)
    index++
    previousEnd = m.index + m[0].length
  }
  return breaks
}

interface Run {
  readonly speaker: string | null
  /** Joined text of the run's segments. */
  readonly text: string
  /** Time of each character of `text`. */
  readonly times: Float64Array
  /** Character offsets where a segment ends (exclusive), ascending. */
  readonly segmentEnds: ReadonlyArray<number>
}

const segmentTimes = (segment: Segment, text: string): Float64Array => {
  const times = new Float64Array(text.length)
  const span = Math.max(0, segment.end - segment.start)
  for (let i = 0; i < text.length; i++) {
    times[i] = segment.start + (text.length <= 1 ? 0 : span * (i / (text.length - 1)))
  }
  const words = segment.words
  if (words === undefined || words.length === 0) return times
  // Word times: find each word in the text, left to right, and give its characters the word's span.
  let at = 0
  for (const word of words) {
    const needle = word.text.trim()
    if (needle.length === 0) continue
    const found = text.indexOf(needle, at)
    if (found < 0) continue
    const start = Math.max(segment.start, Math.min(word.start, segment.end))
    const end = Math.max(start, Math.min(word.end, segment.end))
    for (let i = 0; i < needle.length; i++) {
      times[found + i] = needle.length === 1 ? start : start + (end - start) * (i / (needle.length - 1))
    }
    at = found + needle.length
  }
  return times
}

const runsOf = (segments: ReadonlyArray<Segment>): Array<Run> => {
  const runs: Array<Run> = []
  let current: { speaker: string | null; parts: Array<string>; times: Array<Float64Array>; ends: Array<number>; length: number } | null = null
  const flush = () => {
    if (current === null) return
    const times = new Float64Array(current.length)
    let offset = 0
    for (const t of current.times) {
      times.set(t, offset)
      offset += t.length
    }
    runs.push({ speaker: current.speaker, text: current.parts.join(""), times, segmentEnds: current.ends })
    current = null
  }
  for (const segment of segments) {
    const text = segment.text.trim()
    if (text.length === 0) continue
    if (current !== null && current.speaker !== segment.speaker) flush()
    if (current === null) current = { speaker: segment.speaker, parts: [], times: [], ends: [], length: 0 }
    const times = segmentTimes(segment, text)
    if (current.length > 0) {
      // The joining space takes the time of the previous segment's last character.
      const prev = current.times[current.times.length - 1]!
      current.parts.push(" ")
      current.times.push(Float64Array.of(prev[prev.length - 1]!))
      current.length += 1
    }
    current.parts.push(text)
    current.times.push(times)
    current.length += text.length
    current.ends.push(current.length)
  }
  flush()
  return runs
}

/** Character offsets (exclusive) where sentences end inside `text`, by punctuation. */
const punctuationCuts = (text: string): Array<number> => {
  const cuts: Array<number> = []
  const re = /[.?!…]+["'”’)\]]*(?=\s+["'“‘(\[]?[\p{Lu}\p{N}])/gu
  for (const m of text.matchAll(re)) {
    const end = m.index + m[0].length
    if (m[0].startsWith(".")) {
      const before = text.slice(0, m.index).match(/([\p{L}.]+)$/u)?.[1]?.toLowerCase()
      if (before !== undefined && (ABBREVIATIONS.has(before) || /^\p{L}$/u.test(before))) continue
    }
    cuts.push(end)
  }
  return cuts
}

const sentenceAt = (run: Run, from: number, to: number, index: number): Sentence | null => {
  let a = from
  let b = to
  while (a < b && /\s/.test(run.text[a]!)) a++
  while (b > a && /\s/.test(run.text[b - 1]!)) b--
  if (a >= b) return null
  const text = run.text.slice(a, b)
  const tokens: Array<string> = []
  const tokenTimes: Array<readonly [number, number]> = []
  for (const m of text.matchAll(TOKEN)) {
    tokens.push(m[0].toLowerCase().replace(/’/g, "'"))
    tokenTimes.push([run.times[a + m.index]!, run.times[a + m.index + m[0].length - 1]!])
  }
  if (tokens.length === 0) return null
  return { index, text, start: run.times[a]!, end: run.times[b - 1]!, speaker: run.speaker, tokens, tokenTimes }
}

/** Cuts a span that is too long: first at segment ends, then every `MAX_WORDS` words. */
const cutLong = (run: Run, from: number, to: number): Array<number> => {
  if (countWords(run.text.slice(from, to)) <= MAX_WORDS) return [to]
  const cuts: Array<number> = []
  let start = from
  for (const end of run.segmentEnds) {
    if (end <= start || end >= to) continue
    if (countWords(run.text.slice(start, end)) >= MAX_WORDS / 2) {
      cuts.push(end)
      start = end
    }
  }
  cuts.push(to)
  const result: Array<number> = []
  let prev = from
  for (const cut of cuts) {
    const piece = run.text.slice(prev, cut)
    if (countWords(piece) > MAX_WORDS) {
      let count = 0
      for (const m of piece.matchAll(TOKEN)) {
        if (++count > MAX_WORDS) {
          result.push(prev + m.index)
          count = 1
        }
      }
    }
    result.push(cut)
    prev = cut
  }
  // Cuts pushed while walking a piece precede the piece's own end; keep them sorted.
  return result.sort((x, y) => x - y)
}

export const splitSentences = (segments: ReadonlyArray<Segment>): Array<Sentence> => {
  const sentences: Array<Sentence> = []
  for (const run of runsOf(segments)) {
    let from = 0
    for (const cut of [...punctuationCuts(run.text), run.text.length]) {
      for (const end of cutLong(run, from, cut)) {
        const sentence = sentenceAt(run, from, end, sentences.length)
        if (sentence !== null) sentences.push(sentence)
        from = end
      }
    }
  }
  return sentences
}
