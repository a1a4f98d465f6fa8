/**
 * Text renderings of a transcript: plain text, SRT and WebVTT. Cues come from `segmentPhrases`
 * (one per spoken phrase, ≤ ~30 s); empty segments produce no cue. With a caption shape
 * (`CaptionShaping`), each phrase is cut into subtitle-sized cues of wrapped lines instead.
 */
import type { Segment, Transcript } from "../../src/contract/domain/Transcript.ts"
import { segmentPhrases } from "../../pipeline/SegmentPhrases.ts"
import { type CaptionShape, isShaped, shapePhrase } from "./CaptionShaping.ts"
import { timecode } from "./Timecode.ts"

/** Cue text on one line: a blank line would end the cue early. */
const oneLine = (text: string) => text.replace(/\s*[\r\n]+\s*/g, " ").trim()

interface Cue {
  readonly start: number
  readonly end: number
  /** One line unless shaped. */
  readonly lines: ReadonlyArray<string>
  readonly speaker: string | null
}

/**
 * Who a segment is shown as: the name a person gave its speaker (`speaker_name`), else the label;
 * null without diarization. The name is one line, like the cue it leads.
 */
export const shownSpeaker = (s: Pick<Segment, "speaker" | "speaker_name">): string | null =>
  s.speaker === null ? null : s.speaker_name ? oneLine(s.speaker_name) : s.speaker

/**
 * Cues in time order with end ≥ start (rounded to the millisecond as printed). `labelled`: the
 * speaker label is shown text leading the first line (SRT), so shaping counts it.
 */
const cues = (segments: ReadonlyArray<Segment>, shape: CaptionShape | undefined, labelled: boolean): Array<Cue> => {
  // Phrases are cut from segments and keep only the label; the name goes by label.
  const names = new Map(segments.map((s) => [s.speaker, shownSpeaker(s)] as const))
  const out: Array<Cue> = []
  for (const s of segmentPhrases(segments)) {
    const text = oneLine(s.text)
    if (text.length === 0) continue
    const speaker = names.get(s.speaker) ?? s.speaker
    if (isShaped(shape)) {
      const prefix = labelled ? [...speakerLabel(speaker)].length : 0
      for (const cue of shapePhrase({ ...s, text }, shape, prefix)) {
        const start = Math.max(0, cue.start)
        out.push({ start, end: Math.max(start, cue.end), lines: cue.lines, speaker })
      }
      continue
    }
    const start = Math.max(0, s.start)
    out.push({ start, end: Math.max(start, s.end), lines: [text], speaker })
  }
  return out
}

/** The speaker (name or label) that leads a line or cue of a diarized transcript, as in the docx rendering. */
const speakerLabel = (speaker: string | null) => (speaker ? `${speaker}: ` : "")

/** The cue's text: its lines, the first led by `lead` (a label alone on its line loses its trailing space). */
const cueText = (lead: string, lines: ReadonlyArray<string>) =>
  [(lead + (lines[0] ?? "")).trimEnd(), ...lines.slice(1)].join("\n")

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
export const toSrt = (t: Transcript, shape?: CaptionShape): string =>
  cues(t.segments, shape, true)
    .map((c, i) => `${i + 1}\n${timecode(c.start, ",")} --> ${timecode(c.end, ",")}\n${cueText(speakerLabel(c.speaker), c.lines)}\n`)
    .join("\n")

const vttEscape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** `WEBVTT` header, `HH:MM:SS.mmm` times; the speaker becomes a voice span `<v SPEAKER_00>` (`<v Ana>` once named). */
export const toVtt = (t: Transcript, shape?: CaptionShape): string => {
  const body = cues(t.segments, shape, false).map((c) => {
    const text = cueText("", c.lines.map(vttEscape))
    return `${timecode(c.start, ".")} --> ${timecode(c.end, ".")}\n${c.speaker ? `<v ${vttEscape(c.speaker)}>${text}` : text}\n`
  })
  return ["WEBVTT\n", ...body].join("\n")
}
