/**
 * A transcript cut into retrieval passages. Pure.
 *
 * Two kinds, both indexed:
 * - `window`: consecutive segments of about 30–45 s or 80–120 words, always whole
 *   segments, starting every half window (50% overlap). A question is usually answered
 *   by a few sentences of context, which a sentence embedding of one short phrase misses;
 *   the overlap makes sure every stretch of talk sits well inside some window instead of
 *   being split at a window edge.
 * - `segment`: every segment alone (long segments first cut into phrases of at most
 *   12 s, see MOMENT_PHRASES; phrases ending mid-sentence joined with the rest of the
 *   sentence in the same speaker's turn, see sentenceMoments). Precise for lexical matches (names, numbers) and the
 *   source of a hit's "moment": a window hit is narrowed to the segment inside it that
 *   matches best, with that segment's own times.
 *
 * A transcript that fits in one window gives one window (if it has several segments) plus
 * its segments; a one-segment transcript gives only the segment.
 */
import { segmentPhrases } from "../pipeline/SegmentPhrases.ts"
import type { Segment, Transcript } from "../src/contract/domain/Transcript.ts"

export type PassageKind = "window" | "segment"

/** A segment as kept inside a passage: the candidates for a hit's moment. */
export interface Moment {
  readonly start: number
  readonly end: number
  readonly text: string
  readonly speaker: string | null
}

export interface Passage {
  readonly kind: PassageKind
  readonly start: number
  readonly end: number
  /** The speaker who talks longest in the passage; null when nobody is labelled. */
  readonly speaker: string | null
  readonly text: string
  readonly moments: ReadonlyArray<Moment>
}

export const WINDOW_MIN_SECONDS = 30
export const WINDOW_MAX_SECONDS = 45
export const WINDOW_MIN_WORDS = 80
export const WINDOW_MAX_WORDS = 120

const wordCount = (text: string): number => text.split(/\s+/u).filter((w) => w !== "").length

const toMoment = (segment: Segment): Moment => ({
  start: segment.start,
  end: segment.end,
  text: segment.text.trim(),
  speaker: segment.speaker
})

const mainSpeaker = (moments: ReadonlyArray<Moment>): string | null => {
  const talk = new Map<string, number>()
  for (const m of moments) {
    if (m.speaker !== null) talk.set(m.speaker, (talk.get(m.speaker) ?? 0) + Math.max(m.end - m.start, 0.01))
  }
  let best: string | null = null
  let most = 0
  for (const [speaker, seconds] of talk) {
    if (seconds > most) {
      best = speaker
      most = seconds
    }
  }
  return best
}

const passageOf = (kind: PassageKind, moments: ReadonlyArray<Moment>): Passage => ({
  kind,
  start: moments[0]!.start,
  end: moments[moments.length - 1]!.end,
  speaker: mainSpeaker(moments),
  text: moments.map((m) => m.text).join(" "),
  moments
})

/** Windows over `moments` (non-empty texts, in time order). */
const windows = (moments: ReadonlyArray<Moment>): Array<Passage> => {
  const out: Array<Passage> = []
  const words = moments.map((m) => wordCount(m.text))
  let first = 0
  while (first < moments.length) {
    let last = first
    let count = words[first]!
    // Grow until the window is long enough, never past the maximum (one segment always fits).
    while (last + 1 < moments.length) {
      const seconds = moments[last]!.end - moments[first]!.start
      if (seconds >= WINDOW_MIN_SECONDS || count >= WINDOW_MIN_WORDS) break
      const nextSeconds = moments[last + 1]!.end - moments[first]!.start
      if (nextSeconds > WINDOW_MAX_SECONDS || count + words[last + 1]! > WINDOW_MAX_WORDS) break
      last++
      count += words[last]!
    }
    if (last > first) out.push(passageOf("window", moments.slice(first, last + 1)))
    if (last === moments.length - 1) break
    // The next window starts at the first segment past half of this one (in time and words).
    const half = (moments[last]!.end - moments[first]!.start) / 2
    let next = first + 1
    let seen = words[first]!
    while (next < last && moments[next]!.start - moments[first]!.start < half && seen < count / 2) {
      seen += words[next]!
      next++
    }
    first = next
  }
  return out
}

/**
 * Stored segments can run to ~30 s; a moment should be about a sentence. Segments over
 * 12 s (or with a pause of 0.8 s inside) are cut like cues are (pipeline/SegmentPhrases:
 * at pauses and punctuation with word times, else at sentence ends with times
 * interpolated by character position).
 */
const MOMENT_PHRASES = { maxCueSeconds: 12, pauseSeconds: 0.8 }

/**
 * A moment is sentence-complete: a phrase not ending a sentence (a segment break in the
 * middle of one, "…the bees are on the" | "north roof.") is joined with the next one, as
 * long as the same speaker goes on (both unlabelled counts as the same), the pause between
 * them is under MERGE_GAP_SECONDS and the joined moment stays within MERGE_MAX_SECONDS
 * (talk without punctuation must not become one moment).
 */
export const MERGE_GAP_SECONDS = 1.5
export const MERGE_MAX_SECONDS = 20
const endsSentence = (text: string): boolean => /[.!?…。？！]["'”’»)\]]*$/u.test(text)

export const sentenceMoments = (moments: ReadonlyArray<Moment>): Array<Moment> => {
  const out: Array<Moment> = []
  for (const m of moments) {
    const last = out.at(-1)
    if (
      last !== undefined && !endsSentence(last.text) && last.speaker === m.speaker &&
      m.start - last.end < MERGE_GAP_SECONDS && m.end - last.start <= MERGE_MAX_SECONDS
    ) {
      out[out.length - 1] = { start: last.start, end: Math.max(last.end, m.end), text: `${last.text} ${m.text}`, speaker: last.speaker }
    } else {
      out.push(m)
    }
  }
  return out
}

export const cutPassages = (transcript: Transcript): ReadonlyArray<Passage> => {
  const moments = sentenceMoments(
    segmentPhrases(transcript.segments, MOMENT_PHRASES)
      .map(toMoment)
      .filter((m) => m.text !== "")
      .sort((a, b) => a.start - b.start)
  )
  if (moments.length === 0) return []
  return [...windows(moments), ...moments.map((m) => passageOf("segment", [m]))]
}
