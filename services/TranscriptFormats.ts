/**
 * Renders a stored Transcript in every format of `GET /v1/jobs/{id}/result`: json, txt, srt, vtt,
 * docx. All come from the same stored value; no format needs reprocessing. Bodies are bytes
 * (UTF-8 for the text formats) with the content type and file extension to serve them under.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { Transcript, type TranscriptFormat } from "../src/contract/domain/Transcript.ts"
import { buildDocx, type DocumentMeta } from "./formats/DocxDocument.ts"
import type { CaptionShape } from "./formats/CaptionShaping.ts"
import { toSrt, toTxt, toVtt } from "./formats/Subtitles.ts"

export { segmentPhrases } from "../pipeline/SegmentPhrases.ts"
export { toSrt, toTxt, toVtt } from "./formats/Subtitles.ts"
export type { DocumentMeta } from "./formats/DocxDocument.ts"
export type { CaptionShape } from "./formats/CaptionShaping.ts"

export interface RenderedTranscript {
  readonly format: TranscriptFormat
  readonly contentType: string
  /** File extension without the dot, for Content-Disposition. */
  readonly extension: string
  readonly body: Uint8Array
}

export const contentTypes: Record<TranscriptFormat, string> = {
  json: "application/json",
  txt: "text/plain; charset=utf-8",
  srt: "application/x-subrip",
  vtt: "text/vtt",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
}

/** The JSON rendering: the Transcript schema's encoding (unknown keys dropped, `words` only when stored). */
export const toJson = (t: Transcript): string => JSON.stringify(Schema.encodeSync(Transcript)(t))

const utf8 = new TextEncoder()

export class TranscriptFormats extends Context.Service<TranscriptFormats, {
  /**
   * `meta` feeds the docx header (file name, creation date); the other formats ignore it.
   * `shape` cuts srt and vtt cues to subtitle size (see CaptionShaping); the other formats ignore it.
   */
  render(transcript: Transcript, format: TranscriptFormat, meta?: DocumentMeta, shape?: CaptionShape): Effect.Effect<RenderedTranscript>
}>()("verbatim/services/TranscriptFormats") {
  static readonly layer = Layer.succeed(TranscriptFormats)({
    render: Effect.fn("TranscriptFormats.render")(function*(
      transcript: Transcript,
      format: TranscriptFormat,
      meta?: DocumentMeta,
      shape?: CaptionShape
    ) {
      const done = (body: Uint8Array): RenderedTranscript => ({
        format,
        contentType: contentTypes[format],
        extension: format,
        body
      })
      switch (format) {
        case "json":
          return done(utf8.encode(toJson(transcript)))
        case "txt":
          return done(utf8.encode(toTxt(transcript)))
        case "srt":
          return done(utf8.encode(toSrt(transcript, shape)))
        case "vtt":
          return done(utf8.encode(toVtt(transcript, shape)))
        case "docx": {
          // A docx failure here is a bug in how the document is built, not a user error.
          const bytes = yield* Effect.tryPromise(() => buildDocx(transcript, meta)).pipe(Effect.orDie)
          return done(bytes)
        }
      }
    })
  })
}
