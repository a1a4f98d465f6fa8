/**
 * Cue segmentation for SRT/VTT: one cue per spoken phrase, no cue longer than ~30 s (spec: "a
 * passage spoken without pause can become one long cue of up to roughly half a minute").
 *
 * Rule, per stored segment:
 * 1. A segment no longer than `maxCueSeconds` whose words (if any) have no pause of at least
 *    `pauseSeconds` stays one cue, unchanged.
 * 2. With word timings (and the segment text still equal to its words, i.e. not corrected since):
 *    a new phrase starts at every pause ≥ `pauseSeconds` between words. A phrase that would grow
 *    past `maxCueSeconds` is cut at its best boundary at least a third of the way in, scoring each
 *    word boundary as: pause length in seconds, + 1 after sentence punctuation (. ? ! …), + 0.5
 *    after clause punctuation (, ; : —). Cue times are the first word's start and last word's end;
 *    the words travel with their cue.
 * 3. Without word timings (or after a correction of the text): the text is cut into sentences,
 *    sentences are grouped greedily into cues whose interpolated duration stays within the limit,
 *    and a single over-long sentence is cut between words. Times are interpolated linearly over
 *    the segment by character position, so corrected text keeps the segment's timing.
 */
import type { Segment, Word } from "../src/contract/domain/Transcript.ts"

export interface PhraseOptions {
  readonly maxCueSeconds: number
  readonly pauseSeconds: number
}

export const defaultPhraseOptions: PhraseOptions = { maxCueSeconds: 30, pauseSeconds: 1.0 }

const sentenceEnd = /[.?!…。？！]["')\]»”]*$/
const clauseEnd = /[,;:—–、，；：]["')\]»”]*$/

/** Segment text from its words: Whisper words carry their leading space; otherwise join with one. */
export const joinWords = (words: ReadonlyArray<Word>): string =>
  (words.some((w) => /^\s/.test(w.text)) ? words.map((w) => w.text).join("") : words.map((w) => w.text).join(" ")).trim()

const normalized = (text: string) => text.replace(/\s+/g, " ").trim()

const boundaryScore = (before: Word, after: Word): number => {
  const text = before.text.trim()
  return Math.max(0, after.start - before.end) + (sentenceEnd.test(text) ? 1 : clauseEnd.test(text) ? 0.5 : 0)
}

const phraseFromWords = (segment: Segment, words: ReadonlyArray<Word>): Segment => ({
  start: words[0]!.start,
  end: Math.max(words[0]!.start, words[words.length - 1]!.end),
  text: joinWords(words),
  speaker: segment.speaker,
  words
})

const splitByWords = (segment: Segment, words: ReadonlyArray<Word>, o: PhraseOptions): Array<Segment> => {
  const out: Array<Segment> = []
  let current: Array<Word> = []
  const cutOverlong = () => {
    // Cut `current` until it fits: best-scoring boundary at least a third of the way in.
    while (current.length > 1 && current[current.length - 1]!.end - current[0]!.start > o.maxCueSeconds) {
      const first = current[0]!.start
      let best = -1
      let bestScore = -Infinity
      for (let j = 1; j < current.length; j++) {
        if (current[j]!.start - first > o.maxCueSeconds) break
        if (current[j]!.start - first < o.maxCueSeconds / 3) continue
        const score = boundaryScore(current[j - 1]!, current[j]!)
        if (score >= bestScore) {
          bestScore = score
          best = j
        }
      }
      if (best < 0) {
        // No boundary in the allowed span: cut before the first word that overflows.
        best = current.findIndex((w) => w.end - first > o.maxCueSeconds)
        if (best <= 0) best = 1
      }
      out.push(phraseFromWords(segment, current.slice(0, best)))
      current = current.slice(best)
    }
  }
  for (const word of words) {
    const last = current[current.length - 1]
    if (last && word.start - last.end >= o.pauseSeconds) {
      out.push(phraseFromWords(segment, current))
      current = []
    }
    current.push(word)
    cutOverlong()
  }
  if (current.length > 0) out.push(phraseFromWords(segment, current))
  return out
}

/** Cuts text into pieces at sentence ends (keeping the punctuation), then words when too long. */
const splitByText = (segment: Segment, o: PhraseOptions): Array<Segment> => {
  const text = normalized(segment.text)
  const duration = segment.end - segment.start
  if (text.length === 0 || duration <= o.maxCueSeconds) return [{ ...segment }]
  const secondsPerChar = duration / text.length
  const maxChars = Math.max(1, Math.floor(o.maxCueSeconds / secondsPerChar))
  const sentences = text.match(/[^.?!…。？！]+(?:[.?!…。？！]+["')\]»”]*)?\s*|\S+\s*/g) ?? [text]
  const pieces: Array<string> = []
  for (const sentence of sentences) {
    if (sentence.length <= maxChars) {
      pieces.push(sentence)
      continue
    }
    let rest = sentence
    while (rest.length > maxChars) {
      const cut = rest.lastIndexOf(" ", maxChars)
      const at = cut > maxChars / 3 ? cut + 1 : maxChars
      pieces.push(rest.slice(0, at))
      rest = rest.slice(at)
    }
    if (rest.length > 0) pieces.push(rest)
  }
  const cues: Array<Segment> = []
  let buffer = ""
  let offset = 0
  const flush = () => {
    if (buffer.trim().length === 0) return
    const from = offset
    const to = offset + buffer.length
    cues.push({
      start: segment.start + from * secondsPerChar,
      end: Math.min(segment.end, segment.start + to * secondsPerChar),
      text: buffer.trim(),
      speaker: segment.speaker
    })
    offset = to
    buffer = ""
  }
  for (const piece of pieces) {
    if (buffer.length > 0 && buffer.length + piece.length > maxChars) flush()
    buffer += piece
  }
  flush()
  return cues
}

/** Re-splits segments into cues per the rule above; short, pause-free segments pass unchanged. */
export const segmentPhrases = (
  segments: ReadonlyArray<Segment>,
  options: Partial<PhraseOptions> = {}
): Array<Segment> => {
  const o = { ...defaultPhraseOptions, ...options }
  const out: Array<Segment> = []
  for (const segment of segments) {
    const words = segment.words ?? []
    const wordsUsable = words.length > 0 && normalized(joinWords(words)) === normalized(segment.text)
    const hasPause = wordsUsable && words.some((w, i) => i > 0 && w.start - words[i - 1]!.end >= o.pauseSeconds)
    if (segment.end - segment.start <= o.maxCueSeconds && !hasPause) {
      out.push(segment)
    } else if (wordsUsable) {
      out.push(...splitByWords(segment, words, o))
    } else {
      out.push(...splitByText(segment, o))
    }
  }
  return out
}
