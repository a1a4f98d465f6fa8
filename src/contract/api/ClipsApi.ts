/**
 * Clips: a captioned 9:16 video (1080×1920 H.264 + AAC mp4) of a stretch of a finished
 * job's recording, rendered in the background and charged like transcription minutes.
 * `GET /v1/clips/{clip_id}` is polled until `video_url` is set; the video link is signed
 * (no key) and supports Range requests like the playback link.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import {
  AudioGone,
  jsonBodyErrors,
  LinkTokenMissing,
  LinkTokenRejected,
  NotFound,
  NotReady,
  pathIdErrors,
  PaymentRequired,
  RangeNotSatisfiable,
  ValidationFailed
} from "./Errors.ts"
import { JobIdParam, maxAudioSeconds } from "./JobsApi.ts"
import { byteRangeHeaders, linkTokenQuery, mediaBytes, mediaResponseHeaders } from "./PlaybackApi.ts"
import { RequireAccount } from "./Security.ts"

/** Shortest and longest clip, in seconds. */
export const clipLengthLimits = { min: 1, max: 180 } as const

export const CaptionStyleName = Schema.Literals(["karaoke", "line", "none"]).annotate({
  description: "`karaoke`: each word lights up as it is spoken; `line`: one phrase at a time; `none`: no captions."
})

export const ClipStatus = Schema.Literals(["queued", "rendering", "done", "failed"])

export const ClipIdParam = Schema.String.check(Schema.isUUID()).annotate({ description: "A clip id (UUID)." })

export const ClipRequest = Schema.Struct({
  // No recording is longer than a job accepts (10 hours): a time past that cannot be inside one.
  start_s: Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: maxAudioSeconds })).annotate({
    description: "Seconds from the start of the recording."
  }),
  end_s: Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: maxAudioSeconds })).annotate({
    description: "Seconds; after `start_s`, 1 to 180 seconds later, inside the recording."
  }),
  caption_style: Schema.optionalKey(CaptionStyleName.annotate({ default: "karaoke" }))
})
export type ClipRequest = typeof ClipRequest.Type

export const Clip = Schema.Struct({
  clip_id: Schema.String,
  job_id: Schema.String,
  status: ClipStatus,
  progress: Schema.Number.annotate({ description: "Render progress, 0 to 100." }),
  start_s: Schema.Number,
  end_s: Schema.Number,
  caption_style: CaptionStyleName,
  duration: Schema.NullOr(Schema.Number).annotate({ description: "Seconds of the rendered video, once done." }),
  video_url: Schema.NullOr(Schema.String).annotate({
    description: "Signed link to the mp4 (no key, Range requests) once `status` is done; it expires after " +
      "`video_expires_in` seconds — read the clip again for a fresh one."
  }),
  video_expires_in: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String).annotate({ description: "Why the render failed." }),
  created_at: Schema.Number.annotate({ description: "Unix seconds." }),
  completed_at: Schema.NullOr(Schema.Number)
})
export type Clip = typeof Clip.Type

const clipParams = { clip_id: ClipIdParam }

export class ClipsApi extends HttpApiGroup.make("clips")
  .add(
    HttpApiEndpoint.post("create", "/v1/jobs/:job_id/clips", {
      params: { job_id: JobIdParam },
      payload: ClipRequest,
      success: Clip.pipe(HttpApiSchema.status(202)),
      error: [...pathIdErrors, ...jsonBodyErrors, NotFound, NotReady, PaymentRequired, AudioGone, ValidationFailed]
    }).annotateMerge(OpenApi.annotations({
      summary: "Make a captioned 9:16 clip",
      description: "202 with the clip (`status: queued`); poll `GET /v1/clips/{clip_id}`. The stretch must lie inside " +
        "the recording and last 1 to 180 seconds; 422 otherwise (and for an unknown `caption_style`). 409 NOT_READY " +
        "until the job is done; 402 `transcript_locked` for a locked job; 402 NO_CREDITS (with `checkout_url`) when " +
        "the balance cannot cover the clip's minutes, which are charged once, like transcription, and credited back " +
        "if the render fails. Video sources are reframed to 9:16 (portrait or square: centre crop; landscape: the " +
        "whole frame over a blurred fill); audio sources get a background with the title and a waveform."
    })),
    HttpApiEndpoint.get("get", "/v1/clips/:clip_id", {
      params: clipParams,
      success: Clip,
      error: [...pathIdErrors, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "Get a clip", description: "Poll until `video_url` is set." })),
    HttpApiEndpoint.delete("remove", "/v1/clips/:clip_id", {
      params: clipParams,
      success: HttpApiSchema.NoContent,
      error: [...pathIdErrors, NotFound]
    }).annotateMerge(OpenApi.annotations({
      summary: "Delete a clip",
      description: "Removes the clip and its video; a render in progress is cancelled. Minutes are not refunded."
    }))
  )
  .middleware(RequireAccount)
  .annotateMerge(OpenApi.annotations({ title: "Clips" }))
{}

/** The signed video link: authorised by its token, not by a key. */
export class ClipMediaApi extends HttpApiGroup.make("clipMedia")
  .add(
    HttpApiEndpoint.get("video", "/v1/clips/:clip_id/video", {
      params: clipParams,
      query: linkTokenQuery,
      headers: byteRangeHeaders,
      success: mediaBytes("video/mp4"),
      error: [...pathIdErrors, LinkTokenMissing, LinkTokenRejected, NotFound, RangeNotSatisfiable]
    }).annotateMerge(OpenApi.annotations({
      summary: "A clip's video through its signed link",
      description: "Range requests (206), HEAD, ETag / Last-Modified and conditional requests, as for playback."
    })).annotateMerge(mediaResponseHeaders)
  )
  .annotateMerge(OpenApi.annotations({ title: "Clips" }))
{}
