/**
 * Facts about a stored file that a media link needs: its validators (size, modification
 * time, strong ETag), with the content type its owner decided (see `MediaType`).
 */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import { etagOf, type FileFacts, planReply, type ReplyPlan, type RequestValidators } from "./ByteRanges.ts"

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

/** The file at `path` (stored under `key`); a file that vanished meanwhile is `undefined`. */
export const describeFile = Effect.fn("StoredFiles.describeFile")(function*(
  path: string,
  key: string,
  filename: string,
  contentType: string
) {
  const stat = yield* Effect.promise(() => fs.stat(path).catch(() => undefined))
  if (stat === undefined || !stat.isFile()) return undefined
  const facts: FileFacts = { size: stat.size, modifiedAt: stat.mtime, etag: etagOf(stat.size, stat.mtime, key) }
  const served: ServedFile = { path, facts, filename, contentType }
  return served
})

export const replyFor = (file: ServedFile, request: RequestValidators): MediaReply => ({
  file,
  plan: planReply(file.facts, request)
})
