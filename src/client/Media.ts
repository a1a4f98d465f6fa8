/** A recording to send: a file on disk (streamed, never read whole into memory) or bytes. */
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

export type MediaInput =
  | { readonly path: string; readonly filename?: string; readonly contentType?: string }
  | { readonly bytes: Uint8Array; readonly filename: string; readonly contentType?: string }

export class MediaUnreadable extends Schema.TaggedError<MediaUnreadable>()("MediaUnreadable", {
  path: Schema.String,
  cause: Schema.Defect()
}) {}

/** The server sniffs and probes the file itself; a type it need not know is "unknown". */
const unknownType = "application/octet-stream"

export interface Media {
  readonly blob: Blob
  readonly filename: string
  readonly contentType: string
}

export const openMedia = (input: MediaInput): Effect.Effect<Media, MediaUnreadable> => {
  const contentType = input.contentType ?? unknownType
  if ("bytes" in input) {
    return Effect.succeed({
      blob: new Blob([input.bytes as Uint8Array<ArrayBuffer>], { type: contentType }),
      filename: input.filename,
      contentType
    })
  }
  return Effect.tryPromise({
    try: () => fs.openAsBlob(input.path, { type: contentType }),
    catch: (cause) => new MediaUnreadable({ path: input.path, cause })
  }).pipe(Effect.map((blob) => ({ blob, filename: input.filename ?? path.basename(input.path), contentType })))
}
