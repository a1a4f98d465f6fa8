/**
 * The Word rendering, built with the `docx` package: a title, metadata lines (file name, language,
 * duration, creation date when known) and one paragraph per stored segment, prefixed with its
 * start time and speaker (its given name, else the label) when diarization ran.
 */
import { DateTime } from "effect"
import { Document, HeadingLevel, Packer, Paragraph, TextRun } from "docx"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { shownSpeaker } from "./Subtitles.ts"
import { clockLabel } from "./Timecode.ts"

export interface DocumentMeta {
  /** Heading; defaults to the file name, else "Transcript". */
  readonly title?: string | null | undefined
  readonly filename?: string | null | undefined
  /** Unix epoch seconds (the job's created_at). */
  readonly createdAt?: number | null | undefined
}

const metaLine = (label: string, value: string) =>
  new Paragraph({ children: [new TextRun({ text: `${label}: `, bold: true }), new TextRun(value)] })

export const buildDocx = (t: Transcript, meta: DocumentMeta = {}): Promise<Uint8Array> => {
  const title = meta.title ?? meta.filename ?? "Transcript"
  const lines: Array<Paragraph> = [new Paragraph({ text: title, heading: HeadingLevel.TITLE })]
  if (meta.filename) lines.push(metaLine("File", meta.filename))
  lines.push(metaLine("Language", t.language ?? "unknown"))
  lines.push(metaLine("Duration", clockLabel(t.duration)))
  if (meta.createdAt !== null && meta.createdAt !== undefined) {
    const iso = DateTime.formatIso(DateTime.makeUnsafe(meta.createdAt * 1000))
    lines.push(metaLine("Created", `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`))
  }
  lines.push(new Paragraph({ text: "" }))
  const spoken = t.segments.filter((s) => s.text.trim().length > 0)
  if (spoken.length === 0) {
    lines.push(new Paragraph({ children: [new TextRun({ text: t.speech_detected ? t.text : "No speech detected.", italics: true })] }))
  }
  for (const s of spoken) {
    const runs = [new TextRun({ text: `[${clockLabel(s.start)}] `, color: "666666" })]
    const speaker = shownSpeaker(s)
    if (speaker) runs.push(new TextRun({ text: `${speaker}: `, bold: true }))
    runs.push(new TextRun(s.text.trim()))
    lines.push(new Paragraph({ children: runs, spacing: { after: 120 } }))
  }
  const doc = new Document({
    title,
    creator: "Verbatim",
    sections: [{ children: lines }]
  })
  return Packer.toBuffer(doc).then((buffer) => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength))
}
