/**
 * Text renderings of a transcript: plain text, SRT and WebVTT. Cues come from `segmentPhrases`
 * (one per spoken phrase, ≤ ~30 s); empty segments produce no cue.
 */
import type { Segment, Transcript } from "../../src/contract/domain/Transcript.ts"
import { segmentPhrases } from "../../pipeline/SegmentPhrases.ts"
import { timecode } from "./Timecode.ts"

/** Cue text on one line: a blank line would end the cue early. */
const oneLine = (text: string) => text.replace(/\s*[\r\n]+\s*/g, " ").trim()

interface Cue {
  readonly start: number
  readonly end: number
  readonly text: string
  readonly speaker: string | null
}

/**
 * Who a segment is shown as: the name a person gave its speaker (`speaker_name`), else the label;
 * null without diarization. The name is one line, like the cue it leads.
 */
export const shownSpeaker = (s: Pick<Segment, "speaker" | "speaker_name">): string | null =>
  s.speaker === null ? null : s.speaker_name ? oneLine(s.speaker_name) : s.speaker

/** Cues in time order with end ≥ start (rounded to the millisecond as printed). */
const cues = (segments: ReadonlyArray<Segment>): Array<Cue> => {
  // Phrases are cut from segments and keep only the label; the name goes by label.
  const names = new Map(segments.map((s) => [s.speaker, shownSpeaker(s)] as const))
  const out: Array<Cue> = []
  for (const s of segmentPhrases(segments)) {
    const text = oneLine(s.text)
    if (text.length === 0) continue
    const start = Math.max(0, s.start)
    out.push({ start, end: Math.max(start, s.end), text, speaker: names.get(s.speaker) ?? s.speaker })
  }
  return out
}

/** The speaker (name or label) that leads a line or cue of a diarized transcript, as in the docx rendering. */
const speakerLabel = (speaker: string | null) => (speaker ? `${speaker}: ` : "")

/**
 * One segment per line, `SPEAKER_00: ` (or the speaker's given name) first when diarized; the
 * full text when there are no segments.
 */
export const toTxt = (t: Transcript): string => {
  const lines = t.segments.filter((s) => oneLine(s.text).length > 0).map((s) => speakerLabel(shownSpeaker(s)) + oneLine(s.text))
  if (lines.length === 0 && t.text.trim().length > 0) lines.push(oneLine(t.text))
  return lines.length > 0 ? lines.join("\n") + "\n" : ""
}

/**
 * Numbered cues, `HH:MM:SS,mmm --> HH:MM:SS,mmm`, a blank line after each cue. SRT has no
 * voice markup, so a diarized cue starts with its speaker: `SPEAKER_00: text`, or `Ana: text`
 * once the speaker is named.
 */
export const toSrt = (t: Transcript): string =>
  cues(t.segments)
    .map((c, i) => `${i + 1}\n${timecode(c.start, ",")} --> ${timecode(c.end, ",")}\n${speakerLabel(c.speaker)}${c.text}\n`)
    .join("\n")

const vttEscape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** `WEBVTT` header, `HH:MM:SS.mmm` times; the speaker becomes a voice span `<v SPEAKER_00>` (`<v Ana>` once named). */
export const toVtt = (t: Transcript): string => {
  const body = cues(t.segments).map((c) => {
    const text = vttEscape(c.text)
    return `${timecode(c.start, ".")} --> ${timecode(c.end, ".")}\n${c.speaker ? `<v ${vttEscape(c.speaker)}>${text}` : text}\n`
  })
  return ["WEBVTT\n", ...body].join("\n")
}
