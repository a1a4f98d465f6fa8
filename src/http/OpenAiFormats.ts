/**
 * The OpenAI audio API's answer shapes, from a stored Verbatim transcript, and its error body
 * `{ error: { message, type, code, param } }` from a Verbatim `{ error, code }` refusal.
 */
import type { Transcript } from "../contract/domain/Transcript.ts"

export const responseFormats = ["json", "text", "srt", "verbose_json", "vtt"] as const
export type ResponseFormat = (typeof responseFormats)[number]

/** Our rendering for the formats that map one to one. */
export const renderedFormat = { text: "txt", srt: "srt", vtt: "vtt" } as const

const round = (seconds: number) => Math.round(seconds * 1000) / 1000

/**
 * `verbose_json`: segments always (times in seconds; Verbatim does not expose token ids or
 * decoder statistics, so `tokens` is empty and the statistics are neutral), `words` when word
 * granularity was asked for, each with its `probability` (the stored word `confidence`) when known.
 */
export const verboseJson = (
  transcript: Transcript,
  granularities: ReadonlySet<string>,
  task: "transcribe" | "translate" = "transcribe"
) => {
  const answer: Record<string, unknown> = {
    task,
    language: transcript.language ?? "unknown",
    duration: round(transcript.duration),
    text: transcript.text
  }
  if (granularities.has("segment") || !granularities.has("word")) {
    answer["segments"] = transcript.segments.map((segment, id) => ({
      id,
      seek: 0,
      start: round(segment.start),
      end: round(segment.end),
      text: segment.text,
      tokens: [],
      temperature: 0,
      avg_logprob: 0,
      compression_ratio: 1,
      no_speech_prob: 0
    }))
  }
  if (granularities.has("word")) {
    answer["words"] = transcript.segments.flatMap((segment) =>
      (segment.words ?? []).map((word) => ({
        word: word.text.trim(),
        start: round(word.start),
        end: round(word.end),
        // faster-whisper's name for the same figure (the mean of the word's token probabilities).
        ...(word.confidence === undefined ? {} : { probability: word.confidence })
      }))
    )
  }
  return answer
}

export interface OpenAiError {
  readonly status: number
  readonly body: {
    readonly error: { readonly message: string; readonly type: string; readonly code: string | null; readonly param: string | null }
  }
}

/** The `type` OpenAI's clients switch on, by HTTP status. */
const typeFor = (status: number) =>
  status === 402
    ? "insufficient_quota"
    : status === 429
    ? "requests"
    : status >= 500
    ? "server_error"
    : "invalid_request_error"

/**
 * A refusal in OpenAI's shape, keeping the HTTP status. `code` is the Verbatim code in lower
 * case (`no_credits`, `file_too_long`, …) except where OpenAI has its own (`invalid_api_key`,
 * `rate_limit_exceeded`).
 */
export const openAiError = (
  status: number,
  refusal: { readonly error: string; readonly code: string },
  param: string | null = null
): OpenAiError => ({
  status,
  body: {
    error: {
      message: refusal.error,
      type: typeFor(status),
      code: refusal.code === "MISSING_API_KEY" || refusal.code === "INVALID_API_KEY"
        ? "invalid_api_key"
        : refusal.code === "RATE_LIMITED"
        ? "rate_limit_exceeded"
        : refusal.code.toLowerCase(),
      param
    }
  }
})
