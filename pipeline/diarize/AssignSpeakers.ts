/**
 * Speaker labels on a transcript from diarization turns (pure).
 *
 * - A word takes the speaker whose turns overlap it most; a word no turn overlaps takes the
 *   speaker of the turn nearest in time (words are timed by the recogniser, turns by the voice
 *   activity: a word often sticks out of its turn by a few tens of ms).
 * - A segment with word times is split wherever the speaker changes between two words: each
 *   piece keeps its words, its text is the words joined, and it runs from its first word's start
 *   to its last word's end (the first piece keeps the segment's start, the last its end).
 *   A segment whose text no longer equals its words (edited since) is not split: its words keep
 *   their own speakers and the segment takes the majority, so the edit is never lost.
 * - A segment without word times takes the speaker with the largest overlap (nearest turn when
 *   none overlaps); it is not split.
 * - No turns at all (diarization found no speech): every speaker is null.
 * `text`, `language`, `duration` and `speech_detected` are unchanged: the pieces of a split
 * segment join back to its text.
 */
import type { Segment, Transcript, Word } from "../../src/contract/domain/Transcript.ts"
import { joinWords } from "../SegmentPhrases.ts"
import type { SpeakerTurn } from "./SpeechWindows.ts"

/** A word with the speaker found for it (a superset of the contract's Word). */
export interface SpeakerWord extends Word {
  readonly speaker: string | null
}

export interface SpeakerSegment extends Segment {
  readonly words?: ReadonlyArray<SpeakerWord>
}

export interface SpeakerTranscript extends Transcript {
  readonly segments: ReadonlyArray<SpeakerSegment>
}

/** The speaker with most overlap with [start, end]; else the nearest turn's; null without turns. */
export const speakerOf = (turns: ReadonlyArray<SpeakerTurn>, start: number, end: number): string | null => {
  const overlap = new Map<string, number>()
  for (const t of turns) {
    const o = Math.min(end, t.end) - Math.max(start, t.start)
    if (o > 0) overlap.set(t.speaker, (overlap.get(t.speaker) ?? 0) + o)
  }
  let best: string | null = null
  let bestOverlap = 0
  for (const [speaker, o] of overlap) {
    if (o > bestOverlap) {
      best = speaker
      bestOverlap = o
    }
  }
  if (best !== null) return best
  let nearest: string | null = null
  let distance = Infinity
  for (const t of turns) {
    const d = Math.max(t.start - end, start - t.end, 0)
    if (d < distance) {
      nearest = t.speaker
      distance = d
    }
  }
  return nearest
}

const normalized = (text: string) => text.replace(/\s+/g, " ").trim()

const majority = (words: ReadonlyArray<SpeakerWord>): string | null => {
  const time = new Map<string, number>()
  for (const w of words) {
    // Zero-length words still count a little, so a segment of them has a majority.
    if (w.speaker !== null) time.set(w.speaker, (time.get(w.speaker) ?? 0) + Math.max(w.end - w.start, 1e-3))
  }
  let best: string | null = null
  for (const [speaker, t] of time) if (best === null || t > time.get(best)!) best = speaker
  return best
}

const assignSegment = (segment: Segment, turns: ReadonlyArray<SpeakerTurn>): Array<SpeakerSegment> => {
  const words = segment.words
  if (words === undefined || words.length === 0) {
    const speaker = speakerOf(turns, segment.start, segment.end)
    return [{ start: segment.start, end: segment.end, text: segment.text, speaker, ...(words === undefined ? {} : { words: [] }) }]
  }
  const labelled: Array<SpeakerWord> = words.map((w) => ({ ...w, speaker: speakerOf(turns, w.start, w.end) }))
  if (normalized(joinWords(words)) !== normalized(segment.text)) {
    return [{ ...segment, speaker: majority(labelled), words: labelled }]
  }
  const runs: Array<Array<SpeakerWord>> = []
  for (const w of labelled) {
    const run = runs[runs.length - 1]
    if (run && run[0]!.speaker === w.speaker) run.push(w)
    else runs.push([w])
  }
  if (runs.length === 1) return [{ ...segment, speaker: labelled[0]!.speaker, words: labelled }]
  return runs.map((run, i) => {
    const start = i === 0 ? segment.start : run[0]!.start
    const end = i === runs.length - 1 ? segment.end : Math.max(start, run[run.length - 1]!.end)
    return { start, end, text: joinWords(run), speaker: run[0]!.speaker, words: run }
  })
}

export const assignSpeakers = (transcript: Transcript, turns: ReadonlyArray<SpeakerTurn>): SpeakerTranscript => ({
  ...transcript,
  segments: transcript.segments.flatMap((segment) => assignSegment(segment, turns))
})
