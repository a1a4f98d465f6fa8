/**
 * The words spoken inside a clip, with times from the clip's start, for its captions.
 *
 * Word times come from the transcript's `words` when the job was run with
 * `word_timestamps`. Otherwise they are estimated per segment: the segment's span is shared
 * among its words in proportion to their length in characters (plus one for the gap after
 * each word), which keeps every word inside its own phrase — captions can be early or late
 * by a fraction of a phrase, never by more. (The render first tries to time such words by
 * recognition, see WordAlignment; this estimate is what is left when that finds nothing.)
 * Words are kept when they overlap the clip and clipped to its bounds.
 */
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import type { TimedWord } from "../../pipeline/render/CaptionScript.ts"

type Segment = Transcript["segments"][number]

export const estimatedWords = (segment: Segment): ReadonlyArray<TimedWord> => {
  const texts = segment.text.split(/\s+/).filter((word) => word !== "")
  const weights = texts.map((text) => text.length + 1)
  const total = weights.reduce((sum, weight) => sum + weight, 0)
  const span = Math.max(0, segment.end - segment.start)
  let at = segment.start
  return texts.map((text, i) => {
    const length = total === 0 ? 0 : (span * weights[i]!) / total
    const word = { start: at, end: at + length * (text.length / weights[i]!), text }
    at += length
    return word
  })
}

export const clipWords = (transcript: Transcript, startS: number, endS: number): ReadonlyArray<TimedWord> =>
  transcript.segments
    .filter((segment) => segment.end > startS && segment.start < endS)
    .flatMap((segment) => segment.words !== undefined && segment.words.length > 0 ? segment.words : estimatedWords(segment))
    .filter((word) => word.end > startS && word.start < endS && word.text.trim() !== "")
    .map((word) => ({
      start: Math.max(0, word.start - startS),
      end: Math.min(endS, word.end) - startS,
      text: word.text.trim()
    }))
