/**
 * The media type a job's stored recording is served with, decided once when the media is
 * accepted (and stored in `jobs.media_type`). The bytes decide the container; a declared type
 * or the file name only settles what the bytes cannot tell — whether an mp4 / webm / matroska
 * container holds video (the sniffer reads the container, not its tracks) — or stands in when
 * the bytes are not recognised. Every answer is one of `playbackMediaTypes`, the list the
 * OpenAPI document gives for the audio route; anything else is `application/octet-stream`.
 */
import { Effect } from "effect"
import { fileTypeFromFile } from "file-type"
import { playbackMediaTypes } from "../../src/contract/api/PlaybackApi.ts"
import { extensionOf } from "../../src/contract/domain/MediaTypes.ts"

export const unknownMediaType = "application/octet-stream"

const served: ReadonlySet<string> = new Set(playbackMediaTypes)

const typesByExtension: Record<string, string> = {
  mp3: "audio/mpeg", mpga: "audio/mpeg", mp2: "audio/mpeg", m4a: "audio/mp4", m4b: "audio/mp4", aac: "audio/aac",
  wav: "audio/wav", wave: "audio/wav", flac: "audio/flac", ogg: "audio/ogg", oga: "audio/ogg", opus: "audio/ogg",
  spx: "audio/ogg", wma: "audio/x-ms-wma", amr: "audio/amr", aif: "audio/aiff", aiff: "audio/aiff",
  caf: "audio/x-caf", mka: "audio/x-matroska", weba: "audio/webm", ac3: "audio/ac3", mp4: "video/mp4",
  m4v: "video/mp4", mov: "video/quicktime", webm: "video/webm", mkv: "video/x-matroska", avi: "video/x-msvideo",
  wmv: "video/x-ms-wmv", flv: "video/x-flv", "3gp": "video/3gpp", "3g2": "video/3gpp2", mpeg: "video/mpeg",
  mpg: "video/mpeg", ts: "video/mp2t", mts: "video/mp2t", ogv: "video/ogg"
}

/** Other spellings of the served types (the sniffer's and common clients'). */
const aliases: Record<string, string> = {
  "audio/x-m4a": "audio/mp4", "audio/m4a": "audio/mp4", "video/x-m4v": "video/mp4", "audio/x-wav": "audio/wav",
  "audio/wave": "audio/wav", "audio/vnd.wave": "audio/wav", "audio/mp3": "audio/mpeg", "audio/x-mpeg": "audio/mpeg",
  "audio/x-flac": "audio/flac", "audio/x-aiff": "audio/aiff", "audio/x-aac": "audio/aac", "application/ogg": "audio/ogg",
  "video/matroska": "video/x-matroska", "audio/matroska": "audio/x-matroska", "video/vnd.avi": "video/x-msvideo",
  "video/avi": "video/x-msvideo", "audio/x-ms-asf": "audio/x-ms-wma", "video/x-ms-asf": "video/x-ms-wmv",
  "audio/vnd.dolby.dd-raw": "audio/ac3"
}

const normal = (mime: string | null | undefined): string | undefined => {
  const base = mime?.split(";")[0]?.trim().toLowerCase()
  if (base === undefined || base === "") return undefined
  const type = aliases[base] ?? base
  return served.has(type) && type !== unknownMediaType ? type : undefined
}

const split = (type: string) => type.split("/") as [string, string]

export interface MediaHints {
  /** The name the recording came with. */
  readonly filename?: string | null | undefined
  /** The type its sender declared (multipart part, upload ticket, the link's server). */
  readonly declared?: string | null | undefined
}

/** `detected`: the sniffer's type for the stored bytes, if it recognised them. */
export const mediaTypeFrom = (detected: string | undefined, hints: MediaHints): string => {
  const hinted = normal(hints.declared) ?? typesByExtension[extensionOf(hints.filename ?? "") ?? ""]
  const sniffed = normal(detected)
  if (sniffed === undefined) return hinted ?? unknownMediaType
  if (hinted === undefined) return sniffed
  const [sniffedTop, sniffedSub] = split(sniffed)
  const [hintedTop, hintedSub] = split(hinted)
  // Same container, audio vs video: the sender knows whether there is a picture.
  return hintedSub === sniffedSub && hintedTop !== sniffedTop ? hinted : sniffed
}

/** Sniffs the file at `path` (its first bytes) and decides its type with `mediaTypeFrom`. */
export const sniffMediaType = Effect.fn("MediaType.sniff")(function*(path: string, hints: MediaHints) {
  const detected = yield* Effect.promise(() => fileTypeFromFile(path).catch(() => undefined))
  return mediaTypeFrom(detected?.mime, hints)
})
