/** Playback links and the signed audio link: decode → one service call → encode. */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Playback } from "../../services/playback/Playback.ts"
import type { MediaReply } from "../../services/playback/StoredFiles.ts"
import { Api } from "../contract/api/Api.ts"
import { RangeNotSatisfiable } from "../contract/api/Errors.ts"
import { CurrentCaller } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { errorResponse } from "./ErrorResponses.ts"

const quoted = (name: string) => name.replace(/[^\x20-\x7e]|["\\]/g, "_")

/** A `MediaReply` as HTTP: 200 / 206 with the bytes, 304, or 416 with `Content-Range: bytes * /size`. */
export const mediaResponse = (reply: MediaReply) =>
  Effect.gen(function*() {
    const { facts } = reply.file
    const validators = {
      etag: facts.etag,
      "last-modified": facts.modifiedAt.toUTCString(),
      "accept-ranges": "bytes",
      "cache-control": "private, max-age=0, must-revalidate"
    }
    switch (reply.plan._tag) {
      case "NotModified":
        return HttpServerResponse.empty({ status: 304, headers: validators })
      case "Unsatisfiable":
        return HttpServerResponse.setHeaders(
          errorResponse(
            RangeNotSatisfiable,
            new RangeNotSatisfiable({ error: "No byte of the requested range exists in this file.", size: facts.size })
          ),
          // The explicit JSON type tells the edge this is already a finished error body.
          { "content-range": `bytes */${facts.size}`, "accept-ranges": "bytes", "content-type": "application/json" }
        )
      case "Whole":
      case "Slice": {
        const slice = reply.plan._tag === "Slice" ? reply.plan : undefined
        const response = yield* HttpServerResponse.file(reply.file.path, {
          contentType: reply.file.contentType,
          ...(slice === undefined ? {} : { status: 206, offset: slice.start, bytesToRead: slice.end - slice.start + 1 })
        }).pipe(Effect.orDie)
        return HttpServerResponse.setHeaders(response, {
          ...validators,
          "content-disposition": `inline; filename="${quoted(reply.file.filename)}"`,
          ...(slice === undefined ? {} : { "content-range": `bytes ${slice.start}-${slice.end}/${facts.size}` })
        })
      }
    }
  })

export const PlaybackHandlers = HttpApiBuilder.group(
  Api,
  "playback",
  Effect.fn(function*(handlers) {
    const playback = yield* Playback
    return handlers.handle("audioUrl", ({ params }) =>
      Effect.gen(function*() {
        return yield* playback.link(yield* CurrentCaller, JobId.make(params.job_id))
      }))
  })
)

export const PlaybackMediaHandlers = HttpApiBuilder.group(
  Api,
  "playbackMedia",
  Effect.fn(function*(handlers) {
    const playback = yield* Playback
    return handlers.handle("audio", ({ params, query, headers }) =>
      Effect.gen(function*() {
        const reply = yield* playback.audio(JobId.make(params.job_id), query.token, headers)
        return yield* mediaResponse(reply)
      }))
  })
)
