/** The job rows the submit paths create (REST, MCP and the OpenAI route share them). */
import type { AdmitRequest } from "../../services/intake/Admission.ts"
import type { ResolvedMedia } from "../../services/links/LinkResolver.ts"
import type { SpeakerHints } from "../../services/intake/SpeakerHints.ts"
import { JobId } from "../contract/domain/Ids.ts"

/** The new job for a resolved link (REST `POST /v1/transcribe/url` and the MCP `submit_link` tool). */
export const linkJob = (
  url: string,
  resolved: ResolvedMedia,
  options: {
    readonly source?: AdmitRequest["job"]["source"] | undefined
    readonly language?: string | undefined
    readonly diarize?: boolean | undefined
    readonly word_timestamps?: boolean | undefined
    readonly prompt?: string | undefined
    readonly task?: "transcribe" | "translate" | undefined
  },
  webhookUrl: string | null,
  speakers?: SpeakerHints
): AdmitRequest["job"] => ({
  id: JobId.make(crypto.randomUUID()),
  source: options.source ?? "url",
  inputKind: "url",
  filename: resolved.filename ?? resolved.title ?? null,
  objectKey: null,
  sizeBytes: resolved.sizeBytes ?? null,
  contentType: resolved.contentType ?? null,
  inputUrl: url,
  resolvedMedia: resolved,
  language: options.language ?? "auto",
  diarize: options.diarize ?? false,
  ...speakers,
  wordTimestamps: options.word_timestamps ?? false,
  prompt: options.prompt ?? null,
  task: options.task ?? "transcribe",
  webhookUrl
})

/** The new job for a multipart upload already in storage (REST `POST /v1/transcribe` and the OpenAI route). */
export const uploadJob = (
  id: JobId,
  file: {
    readonly key: string
    readonly name: string
    readonly contentType: string
    readonly bytes: number
    /** What playback serves it as, from `MediaIntake.sniff`. */
    readonly mediaType?: string | undefined
  },
  options: {
    readonly source: AdmitRequest["job"]["source"]
    readonly language: string
    readonly diarize: boolean
    readonly wordTimestamps: boolean
    readonly prompt?: string | undefined
    readonly task?: "transcribe" | "translate" | undefined
  },
  webhookUrl: string | null,
  speakers?: SpeakerHints
): AdmitRequest["job"] => ({
  id,
  source: options.source,
  inputKind: "upload",
  filename: file.name,
  objectKey: file.key,
  sizeBytes: file.bytes,
  contentType: file.contentType,
  mediaType: file.mediaType ?? null,
  inputUrl: null,
  resolvedMedia: null,
  language: options.language,
  diarize: options.diarize,
  ...speakers,
  wordTimestamps: options.wordTimestamps,
  prompt: options.prompt ?? null,
  task: options.task ?? "transcribe",
  webhookUrl
})
