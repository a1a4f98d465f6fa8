/**
 * Playback of a job's original audio: a short-lived link (`GET /v1/jobs/{job_id}/audio/url`,
 * with the caller's key), and the signed link itself (`GET /v1/jobs/{job_id}/audio?token=…`,
 * no key), which serves the bytes as uploaded with Range and conditional requests.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { responseHeaders } from "./Document.ts"
import {
  AudioGone,
  ClaimTokenRequired,
  LinkTokenMissing,
  LinkTokenRejected,
  NotFound,
  pathIdErrors,
  RangeNotSatisfiable
} from "./Errors.ts"
import { JobIdParam } from "./JobsApi.ts"
import { AllowGuest } from "./Security.ts"

export const PlaybackStorage = Schema.Literals(["direct", "signed"]).annotate({
  description: "`direct`: an absolute object-store URL, used as is. `signed`: a path on this API (no key needed), " +
    "prefixed with the API root the caller used."
})

/**
 * The types the signed audio link answers with: the recording's own type, sniffed from its
 * bytes when it was accepted; `application/octet-stream` when the bytes and its name say
 * nothing known.
 */
export const playbackMediaTypes = [
  "audio/wav", "audio/mpeg", "audio/mp4", "audio/aac", "audio/flac", "audio/ogg", "audio/webm", "audio/aiff",
  "audio/amr", "audio/ac3", "audio/x-caf", "audio/x-matroska", "audio/x-ms-wma", "video/mp4", "video/quicktime",
  "video/webm", "video/x-matroska", "video/x-msvideo", "video/x-ms-wmv", "video/x-flv", "video/3gpp", "video/3gpp2",
  "video/mpeg", "video/mp2t", "video/ogg", "application/octet-stream"
] as const

export const PlaybackUrl = Schema.Struct({
  url: Schema.String.annotate({
    description: "`direct`: an absolute URL. `signed`: a path, `/v1/jobs/{job_id}/audio?token=…`, to append to " +
      "the API root the caller used (for example `https://host` + `url`)."
  }),
  expires_in: Schema.Int.annotate({ description: "Seconds until `url` stops working; fetch a new one then." }),
  storage: PlaybackStorage
})
export type PlaybackUrl = typeof PlaybackUrl.Type

/** The `token` of a signed link; optional in the schema so a missing one answers 401, not 422. */
export const linkTokenQuery = {
  token: Schema.optionalKey(Schema.String.annotate({ description: "The token of the signed link, as handed out." }))
}

/** Request headers a signed media link honours (RFC 9110 ranges and conditional requests). */
export const byteRangeHeaders = {
  range: Schema.optionalKey(Schema.String.annotate({
    description: "`bytes=a-b`, `bytes=a-` or `bytes=-n` (one range; a list of ranges gets the whole file)."
  })),
  "if-range": Schema.optionalKey(Schema.String),
  "if-none-match": Schema.optionalKey(Schema.String),
  "if-modified-since": Schema.optionalKey(Schema.String)
}

/** What a signed media link answers: the bytes (200/206) in one of `contentTypes`, or 304. */
export const mediaBytes = (...contentTypes: ReadonlyArray<string>) =>
  [
    ...contentTypes.flatMap((contentType) => [
      Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType })),
      Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType }), HttpApiSchema.status(206))
    ]),
    HttpApiSchema.Empty(304)
  ]

export const mediaResponseHeaders = responseHeaders({
  200: {
    "Accept-Ranges": { description: "`bytes`." },
    ETag: { description: "Strong validator of the file." },
    "Last-Modified": { description: "When the file was stored." }
  },
  206: { "Content-Range": { description: "`bytes a-b/size`." } },
  416: { "Content-Range": { description: "`bytes */size`." } }
})

const jobParams = { job_id: JobIdParam }

export class PlaybackApi extends HttpApiGroup.make("playback")
  .add(
    HttpApiEndpoint.get("audioUrl", "/v1/jobs/:job_id/audio/url", {
      params: jobParams,
      headers: { "x-claim-token": Schema.optionalKey(Schema.String) },
      success: PlaybackUrl,
      error: [...pathIdErrors, NotFound, ClaimTokenRequired, AudioGone]
    }).annotateMerge(OpenApi.annotations({
      summary: "Get a playback link for the original audio",
      description: "`storage: signed`: `url` is the path `/v1/jobs/{job_id}/audio?token=…` on this API; prefix " +
        "it with the API root the caller used. `storage: direct`: `url` is absolute (the object store). Neither needs a key; both " +
        "stop after `expires_in` seconds. 410 AUDIO_MISSING when the audio is gone (the transcript stays readable)."
    }))
  )
  .middleware(AllowGuest)
  .annotateMerge(OpenApi.annotations({ title: "Playback" }))
{}

/** The signed link: authorised by its token, not by a key. */
export class PlaybackMediaApi extends HttpApiGroup.make("playbackMedia")
  .add(
    HttpApiEndpoint.get("audio", "/v1/jobs/:job_id/audio", {
      params: jobParams,
      query: linkTokenQuery,
      headers: byteRangeHeaders,
      // The original as uploaded, with the type sniffed from its bytes at intake.
      success: mediaBytes(...playbackMediaTypes),
      error: [...pathIdErrors, LinkTokenMissing, LinkTokenRejected, NotFound, AudioGone, RangeNotSatisfiable]
    }).annotateMerge(OpenApi.annotations({
      summary: "Original audio through a signed link",
      description: "The uploaded bytes with their own content type (sniffed from the bytes when the media was " +
        "accepted; `application/octet-stream` when unrecognised). Range requests (206), HEAD, ETag / " +
        "Last-Modified, If-None-Match / If-Modified-Since (304) and If-Range. 401 without a token, 403 for an " +
        "altered (TOKEN_INVALID) or expired (TOKEN_EXPIRED) one, 404 once the job is deleted, 410 when the audio is gone."
    })).annotateMerge(mediaResponseHeaders)
  )
  .annotateMerge(OpenApi.annotations({ title: "Playback" }))
{}
