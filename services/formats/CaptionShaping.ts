/**
 * Subtitle-sized cues for SRT and VTT (`max_chars_per_line`, `max_lines_per_cue`,
 * `max_cue_seconds` on `GET /v1/jobs/{id}/result`). Without any of them the renderings keep the
 * spec's one cue per phrase; this module only runs when one is given.
 *
 * Per phrase (a phrase never mixes speakers, so neither does a cue):
 * - Words: the phrase's own timed words when they still spell its text; otherwise (no
 *   `word_timestamps`, or the text was corrected since) the phrase's current text split on spaces,
 *   each word timed by sharing the phrase's span in proportion to its length (`estimatedWords`,
 *   as clip captions do without stored word times) — so corrections always show, and every
 *   word stays inside its phrase.
 * - Lines: words are packed greedily into lines of at most `maxCharsPerLine` characters; a word
 *   longer than a line is cut into line-sized pieces. In SRT the speaker label (`Ana: `) leads
 *   the first line and counts toward its length.
 * - Cues: words are added while the cue still fits `maxLinesPerCue` lines and its span (first
 *   word's start to last word's end) stays within `maxCueSeconds`. When the next word does not
 *   fit, the cue is closed after its last sentence end (. ? !) in its last two thirds, else its
 *   last clause end (, ; :) in its second half, else after its last word — so cues end on
 *   sentence and clause ends where they can. A lone word longer than `maxCueSeconds` is cut to it.
 * Cue times: the first word's start and the last word's end, so cues are in order, never overlap
 * within a phrase and stay inside the phrase's span.
 */
import type { Segment } from "../../src/contract/domain/Transcript.ts"
import { joinWords } from "../../pipeline/SegmentPhrases.ts"
import { estimatedWords } from "../clips/ClipWords.ts"

export interface CaptionShape {
  readonly maxCharsPerLine?: number | undefined
  readonly maxLinesPerCue?: number | undefined
  readonly maxCueSeconds?: number | undefined
}

/** When lines are asked for but their width is not (or the reverse): the usual broadcast figures. */
export const defaultCharsPerLine = 42
export const defaultLinesPerCue = 2

export const isShaped = (shape: CaptionShape | undefined): shape is CaptionShape =>
  shape !== undefined &&
  (shape.maxCharsPerLine !== undefined || shape.maxLinesPerCue !== undefined || shape.maxCueSeconds !== undefined)

export interface ShapedCue {
  readonly start: number
  readonly end: number
  readonly lines: ReadonlyArray<string>
}

interface TimedText {
  readonly start: number
  readonly end: number
  readonly text: string
}

const sentenceEnd = /[.?!…。？！]["')\]»”]*$/
const clauseEnd = /[,;:—–、，；：]["')\]»”]*$/

/**
 * Where a full cue closes (words before the index stay): after its last sentence end in its last
 * two thirds, else after its last clause end in its second half, else after its last word.
 */
const cutAt = (cue: ReadonlyArray<TimedText>): number => {
  const latest = (pattern: RegExp, from: number) => {
    for (let i = cue.length - 1; i >= Math.max(0, from); i--) if (pattern.test(cue[i]!.text)) return i + 1
    return -1
  }
  const sentence = latest(sentenceEnd, Math.floor(cue.length / 3))
  if (sentence > 0) return sentence
  const clause = latest(clauseEnd, Math.ceil(cue.length / 2) - 1)
  return clause > 0 ? clause : cue.length
}

const normalized = (text: string) => text.replace(/\s+/g, " ").trim()

/** The phrase's words with times: its stored words while they spell its text, else estimated. */
export const phraseWords = (phrase: Segment): ReadonlyArray<TimedText> => {
  const words = (phrase.words ?? []).filter((w) => w.text.trim() !== "")
  if (words.length > 0 && normalized(joinWords(words)) === normalized(phrase.text)) {
    return words.map((w) => ({ start: w.start, end: Math.max(w.start, w.end), text: w.text.trim() }))
  }
  return estimatedWords({ ...phrase, text: normalized(phrase.text) })
}

/** Splits a word longer than `width` into pieces of at most `width` characters (by code point). */
const pieces = (text: string, width: number): Array<string> => {
  const chars = [...text]
  if (chars.length <= width) return [text]
  const out: Array<string> = []
  for (let i = 0; i < chars.length; i += width) out.push(chars.slice(i, i + width).join(""))
  return out
}

const length = (text: string) => [...text].length

/** Greedy line packing; the first line starts with `prefix` (counted, not returned). */
const packLines = (words: ReadonlyArray<string>, width: number, prefix: number): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  let used = prefix
  for (const word of words) {
    const n = length(word)
    if (line === "") {
      if (used + n <= width || used === 0) {
        line = word
        used += n
        continue
      }
      // The prefix alone leaves no room for this word: the prefix keeps the first line.
      lines.push("")
      line = word
      used = n
      continue
    }
    if (used + 1 + n <= width) {
      line += " " + word
      used += 1 + n
    } else {
      lines.push(line)
      line = word
      used = n
    }
  }
  if (line !== "" || lines.length === 0) lines.push(line)
  return lines
}

/**
 * Cues of one phrase. `prefix` is the number of characters that lead each cue's first line
 * (the SRT speaker label), 0 for VTT (its voice span is markup, not shown text).
 */
export const shapePhrase = (phrase: Segment, shape: CaptionShape, prefix: number): Array<ShapedCue> => {
  const wrap = shape.maxCharsPerLine !== undefined || shape.maxLinesPerCue !== undefined
  const width = wrap ? shape.maxCharsPerLine ?? defaultCharsPerLine : Infinity
  const maxLines = wrap ? shape.maxLinesPerCue ?? defaultLinesPerCue : Infinity
  const maxSeconds = shape.maxCueSeconds ?? Infinity
  // Words longer than a line become several line-sized words sharing the word's time.
  const words: Array<TimedText> = phraseWords(phrase).flatMap((w) =>
    Number.isFinite(width) ? pieces(w.text, width).map((text) => ({ ...w, text })) : [w]
  )
  const fits = (cue: ReadonlyArray<TimedText>) =>
    packLines(cue.map((w) => w.text), width, prefix).length <= maxLines &&
    cue[cue.length - 1]!.end - cue[0]!.start <= maxSeconds
  const cues: Array<ShapedCue> = []
  const close = (cue: ReadonlyArray<TimedText>) => {
    const start = cue[0]!.start
    const end = Math.min(Math.max(start, cue[cue.length - 1]!.end), start + maxSeconds)
    cues.push({ start, end, lines: packLines(cue.map((w) => w.text), width, prefix) })
  }
  let current: Array<TimedText> = []
  for (const word of words) {
    if (current.length === 0 || fits([...current, word])) {
      current.push(word)
      continue
    }
    const cut = cutAt(current)
    close(current.slice(0, cut))
    current = [...current.slice(cut), word]
    // The carried-over words with this one may still be too many: close until it fits.
    while (current.length > 1 && !fits(current)) {
      let k = current.length - 1
      while (k > 1 && !fits(current.slice(0, k))) k--
      close(current.slice(0, k))
      current = current.slice(k)
    }
  }
  if (current.length > 0) close(current)
  return cues
}
