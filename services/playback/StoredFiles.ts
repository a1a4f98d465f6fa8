/**
 * Facts about a stored file that a media link needs: its validators (size, modification
 * time, strong ETag) and its content type — from the extension of its name, else from its
 * first bytes, else `application/octet-stream`.
 */
import { Effect } from "effect"
import { fileTypeFromFile } from "file-type"
import * as fs from "node:fs/promises"
import { extensionOf } from "../../src/contract/domain/MediaTypes.ts"
import { etagOf, type FileFacts, planReply, type ReplyPlan, type RequestValidators } from "./ByteRanges.ts"

const typesByExtension: Record<string, string> = {
  mp3: "audio/mpeg", mpga: "audio/mpeg", mp2: "audio/mpeg", m4a: "audio/mp4", m4b: "audio/mp4", aac: "audio/aac",
  wav: "audio/wav", wave: "audio/wav", flac: "audio/flac", ogg: "audio/ogg", oga: "audio/ogg", opus: "audio/ogg",
  spx: "audio/ogg", wma: "audio/x-ms-wma", amr: "audio/amr", aif: "audio/aiff", aiff: "audio/aiff",
  caf: "audio/x-caf", mka: "audio/x-matroska", weba: "audio/webm", ac3: "audio/ac3", mp4: "video/mp4",
  m4v: "video/mp4", mov: "video/quicktime", webm: "video/webm", mkv: "video/x-matroska", avi: "video/x-msvideo",
  wmv: "video/x-ms-wmv", flv: "video/x-flv", "3gp": "video/3gpp", "3g2": "video/3gpp2", mpeg: "video/mpeg",
  mpg: "video/mpeg", ts: "video/mp2t", mts: "video/mp2t", ogv: "video/ogg"
}

export interface ServedFile {
  readonly path: string
  readonly contentType: string
  /** Name offered in `Content-Disposition`. */
  readonly filename: string
  readonly facts: FileFacts
}

/** A file and how to answer the request for it. */
export interface MediaReply {
  readonly file: ServedFile
  readonly plan: ReplyPlan
}

export const contentTypeOf = Effect.fn("StoredFiles.contentTypeOf")(function*(path: string, name: string) {
  const byName = typesByExtension[extensionOf(name) ?? ""]
  if (byName !== undefined) return byName
  const sniffed = yield* Effect.promise(() => fileTypeFromFile(path).catch(() => undefined))
  return sniffed?.mime ?? "application/octet-stream"
})

/** The file at `path` (stored under `key`); a file that vanished meanwhile is `undefined`. */
export const describeFile = Effect.fn("StoredFiles.describeFile")(function*(
  path: string,
  key: string,
  filename: string,
  contentType?: string
) {
  const stat = yield* Effect.promise(() => fs.stat(path).catch(() => undefined))
  if (stat === undefined || !stat.isFile()) return undefined
  const facts: FileFacts = { size: stat.size, modifiedAt: stat.mtime, etag: etagOf(stat.size, stat.mtime, key) }
  const served: ServedFile = { path, facts, filename, contentType: contentType ?? (yield* contentTypeOf(path, filename)) }
  return served
})

export const replyFor = (file: ServedFile, request: RequestValidators): MediaReply => ({
  file,
  plan: planReply(file.facts, request)
})
