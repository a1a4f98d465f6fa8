/**
 * The LLM provider: an abstractive summary and chapter titles from an OpenAI-compatible chat
 * endpoint, each checked against the transcript (`Grounding.ts`) before it replaces the
 * extractive field.
 *
 * Prompting: the transcript is rendered one line per speaker turn (`[m:ss] Name: text`). Up to
 * `CHUNK_CHARS` it goes in one request with the chapter list. Longer recordings are
 * map-reduced: each chunk of lines gives up to 5 notes, every note with its evidence quoted
 * from the chunk; one final request turns the notes and the chapter list into the summary and
 * the titles. Every summary sentence comes with an `evidence` quote.
 *
 * Check, field by field: the summary is used only if every sentence's evidence occurs verbatim
 * in the transcript (its times and speaker are the evidence's) and no sentence names anything
 * the transcript does not; the titles only if there is exactly one per chapter, each under 80
 * characters, every capitalised word of them (stop words aside) a word of the transcript. An
 * answer that is not the expected JSON (or not a chat completion at all) fails both. Other
 * endpoint failures (timeout, unreachable, HTTP status) are returned as `LlmFailure`.
 */
import { Effect, Schema } from "effect"
import type { Chapter, Summary } from "../../src/contract/domain/Insights.ts"
import type { ExtractiveResult } from "./Extractive.ts"
import { indexTranscript, type TranscriptIndex, ungroundedNames } from "./Grounding.ts"
import type { ChatRequest, LlmClient, LlmFailure } from "./LlmClient.ts"
import type { Sentence } from "./Sentences.ts"

/** Characters of transcript per request (≈ 2,000 tokens, inside an 8k-token context with the answer). */
export const CHUNK_CHARS = 8000
const MAX_TITLE_CHARS = 80
const MAX_SENTENCE_CHARS = 400

const Point = Schema.Struct({ sentence: Schema.String, evidence: Schema.String })
const NotesAnswer = Schema.Struct({ notes: Schema.Array(Point) })
const FinalAnswer = Schema.Struct({ summary: Schema.Array(Point), chapter_titles: Schema.Array(Schema.String) })

const pointJson = {
  type: "object",
  properties: {
    sentence: { type: "string", description: "One sentence of summary." },
    evidence: { type: "string", description: "5 to 30 consecutive words copied exactly from the transcript." }
  },
  required: ["sentence", "evidence"],
  additionalProperties: false
}
export const notesJsonSchema = {
  type: "object",
  properties: { notes: { type: "array", items: pointJson, maxItems: 5 } },
  required: ["notes"],
  additionalProperties: false
}
export const finalJsonSchema = {
  type: "object",
  properties: {
    summary: { type: "array", items: pointJson, minItems: 1, maxItems: 6 },
    chapter_titles: { type: "array", items: { type: "string" } }
  },
  required: ["summary", "chapter_titles"],
  additionalProperties: false
}

const SYSTEM = [
  "You summarize transcripts of spoken recordings. Answer with JSON only, matching the given schema.",
  "Every summary sentence or note must rest on an `evidence` string: 5 to 30 consecutive words copied exactly from the transcript.",
  "Use only names of people, places and organisations that appear in the transcript. Do not add facts that are not in the transcript."
].join(" ")

const clock = (seconds: number) => {
  const s = Math.max(0, Math.floor(seconds))
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`
}

/** One line per speaker turn (or per ~400 characters without diarization). */
export const transcriptLines = (sentences: ReadonlyArray<Sentence>, names: ReadonlyMap<string, string>): Array<string> => {
  const lines: Array<string> = []
  let current: { speaker: string | null; start: number; texts: Array<string>; chars: number } | null = null
  const flush = () => {
    if (current === null) return
    const who = current.speaker === null ? "" : `${names.get(current.speaker) ?? current.speaker}: `
    lines.push(`[${clock(current.start)}] ${who}${current.texts.join(" ")}`)
    current = null
  }
  for (const s of sentences) {
    if (current !== null && (current.speaker !== s.speaker || current.chars > 400)) flush()
    current ??= { speaker: s.speaker, start: s.start, texts: [], chars: 0 }
    current.texts.push(s.text)
    current.chars += s.text.length + 1
  }
  flush()
  return lines
}

export const chunkLines = (lines: ReadonlyArray<string>, maxChars: number): Array<string> => {
  const chunks: Array<string> = []
  let current: Array<string> = []
  let size = 0
  for (const line of lines) {
    if (size > 0 && size + line.length + 1 > maxChars) {
      chunks.push(current.join("\n"))
      current = []
      size = 0
    }
    current.push(line)
    size += line.length + 1
  }
  if (current.length > 0) chunks.push(current.join("\n"))
  return chunks
}

const chapterList = (chapters: ReadonlyArray<Chapter>) =>
  chapters.map((c, i) => `${i + 1}. [${clock(c.start)}–${clock(c.end)}] ${c.gist}`).join("\n")

const finalInstructions = (count: number) =>
  `Write \`summary\`: 2 to 5 sentences covering the whole recording, each with its evidence. ` +
  `Write \`chapter_titles\`: exactly ${count} short titles (2 to 6 words), one per chapter, in order.`

export interface LlmFields {
  readonly summary: Summary | null
  readonly chapters: ReadonlyArray<Chapter> | null
  /** Why a field was rejected, for the logs. */
  readonly rejected: ReadonlyArray<string>
}

const checkSummary = (
  points: ReadonlyArray<typeof Point.Type>,
  index: TranscriptIndex,
  names: ReadonlyMap<string, string>
): { summary: Summary | null; reason?: string } => {
  if (points.length === 0) return { summary: null, reason: "summary: empty" }
  const sentences = []
  for (const p of points) {
    const text = p.sentence.trim()
    if (text.length === 0 || text.length > MAX_SENTENCE_CHARS) return { summary: null, reason: "summary: bad sentence length" }
    const located = index.locate(p.evidence)
    if (located === null) return { summary: null, reason: `summary: evidence not in the transcript: "${p.evidence.slice(0, 80)}"` }
    const missing = ungroundedNames(text, index)
    if (missing.length > 0) return { summary: null, reason: `summary: names not in the transcript: ${missing.join(", ")}` }
    sentences.push({
      text,
      start: Math.round(located.start * 100) / 100,
      end: Math.round(located.end * 100) / 100,
      speaker: located.speaker,
      speaker_name: located.speaker === null ? null : names.get(located.speaker) ?? null
    })
  }
  return { summary: { text: sentences.map((s) => s.text).join(" "), sentences } }
}

const checkTitles = (
  titles: ReadonlyArray<string>,
  chapters: ReadonlyArray<Chapter>,
  index: TranscriptIndex
): { chapters: ReadonlyArray<Chapter> | null; reason?: string } => {
  if (titles.length !== chapters.length) {
    return { chapters: null, reason: `chapters: ${titles.length} titles for ${chapters.length} chapters` }
  }
  for (const title of titles) {
    const t = title.trim()
    if (t.length === 0 || t.length > MAX_TITLE_CHARS) return { chapters: null, reason: "chapters: bad title length" }
    const missing = ungroundedNames(t, index, true)
    if (missing.length > 0) return { chapters: null, reason: `chapters: names not in the transcript: ${missing.join(", ")}` }
  }
  return { chapters: chapters.map((c, i) => ({ ...c, title: titles[i]!.trim() })) }
}

const decodeNotes = Schema.decodeUnknownOption(NotesAnswer)
const decodeFinal = Schema.decodeUnknownOption(FinalAnswer)

const noFields = (reason: string): LlmFields => ({ summary: null, chapters: null, rejected: [reason] })

/** Asks the endpoint and keeps what passes the check; fails only when the endpoint does. */
export const llmFields = Effect.fnUntraced(function*(
  client: LlmClient["Service"],
  base: ExtractiveResult
): Effect.fn.Return<LlmFields, LlmFailure> {
  // A malformed answer (not a completion, content not JSON) fails the check like wrong JSON does.
  const ask = (request: ChatRequest) =>
    client.complete(request).pipe(
      Effect.catchIf((failure) => failure.kind === "malformed", () => Effect.succeed(null as unknown))
    )
  const chapters = base.insights.chapters
  const chunks = chunkLines(transcriptLines(base.sentences, base.names), CHUNK_CHARS)
  let finalUser: string
  if (chunks.length <= 1) {
    finalUser = `Transcript:\n${chunks[0] ?? ""}\n\nChapters:\n${chapterList(chapters)}\n\n${finalInstructions(chapters.length)}`
  } else {
    const notes: Array<typeof Point.Type> = []
    for (const [k, chunk] of chunks.entries()) {
      const answer = yield* ask({
        system: SYSTEM,
        user: `Part ${k + 1} of ${chunks.length} of a transcript:\n${chunk}\n\n` +
          "Write `notes`: up to 5 sentences on the main points of this part, each with its evidence.",
        schemaName: "transcript_notes",
        schema: notesJsonSchema
      })
      const decoded = decodeNotes(answer)
      if (decoded._tag === "None") return noFields(`notes of part ${k + 1}: not the expected JSON`)
      notes.push(...decoded.value.notes)
    }
    const noteLines = notes.map((n) => `- ${n.sentence} (evidence: "${n.evidence}")`).join("\n")
    finalUser = `Notes on consecutive parts of one transcript, each with evidence quoted from it:\n${noteLines}\n\n` +
      `Chapters:\n${chapterList(chapters)}\n\n${finalInstructions(chapters.length)} ` +
      "Evidence must be copied from the notes' evidence."
  }
  const answer = yield* ask({
    system: SYSTEM,
    user: finalUser,
    schemaName: "transcript_insights",
    schema: finalJsonSchema
  })
  const decoded = decodeFinal(answer)
  if (decoded._tag === "None") return noFields("final answer: not the expected JSON")
  const index = indexTranscript(base.sentences)
  const summary = checkSummary(decoded.value.summary, index, base.names)
  const titled = checkTitles(decoded.value.chapter_titles, chapters, index)
  return {
    summary: summary.summary,
    chapters: titled.chapters,
    rejected: [summary.reason, titled.reason].filter((r): r is string => r !== undefined)
  }
})
