/**
 * Playback of a job's original audio. `link` hands out a URL that works without a key for
 * `lifetimeSeconds`: the object store's presigned URL when the backend can presign
 * (`direct`, absolute), else the path of a link on this API signed by `LinkTokens` (`signed`;
 * the spec has clients prefix it with the API root they used). Both serve the media type
 * sniffed when the job's media was accepted (`jobs.media_type`). `audio` is that
 * signed link's side: token first, then the job (deleted or purged → 404), then the bytes
 * (gone from storage → 410 AUDIO_MISSING, while the transcript stays readable).
 */
import { Context, Effect, Layer, Option } from "effect"
import { AudioGone, type ClaimTokenRequired, type LinkTokenMissing, type LinkTokenRejected, type NotFound } from "../../src/contract/api/Errors.ts"
import type { PlaybackUrl } from "../../src/contract/api/PlaybackApi.ts"
import type { Caller } from "../../src/contract/api/Security.ts"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { JobAccess, jobNotFound } from "../access/JobAccess.ts"
import type { JobRecord } from "../jobs/JobRecord.ts"
import { JobStore } from "../jobs/JobStore.ts"
import { MediaStorage } from "../storage/MediaStorage.ts"
import type { RequestValidators } from "./ByteRanges.ts"
import { LinkTokens } from "./LinkTokens.ts"
import { sniffMediaType } from "./MediaType.ts"
import { PlaybackStore } from "./PlaybackStore.ts"
import { describeFile, type MediaReply, replyFor, type ServedFile } from "./StoredFiles.ts"

export interface PlaybackOptions {
  /** Lifetime of a playback link. Default one hour. */
  readonly lifetimeSeconds?: number | undefined
}

export const defaultPlaybackLifetimeSeconds = 3600

export const audioPath = (jobId: string, token: string) => `/v1/jobs/${jobId}/audio?token=${encodeURIComponent(token)}`

const audioMissing = () =>
  new AudioGone({
    error: "The original audio of this job is no longer stored; its transcript is still readable.",
    code: "AUDIO_MISSING"
  })

export class Playback extends Context.Service<Playback, {
  /** A `signed` link's `url` is a path on this API; a `direct` one is absolute. */
  link(caller: Caller, jobId: JobId): Effect.Effect<PlaybackUrl, NotFound | ClaimTokenRequired | AudioGone>
  audio(
    jobId: JobId,
    token: string | undefined,
    request: RequestValidators
  ): Effect.Effect<MediaReply, LinkTokenMissing | LinkTokenRejected | NotFound | AudioGone>
}>()("verbatim/playback/Playback") {
  static readonly layerWith = (options: PlaybackOptions = {}) =>
    Layer.effect(
      Playback,
      Effect.gen(function*() {
        const access = yield* JobAccess
        const jobs = yield* JobStore
        const storage = yield* MediaStorage
        const tokens = yield* LinkTokens
        const backend = yield* PlaybackStore
        const lifetime = options.lifetimeSeconds ?? defaultPlaybackLifetimeSeconds

        /** As sniffed at intake; a row from before that is sniffed now, once, and remembered. */
        const mediaTypeOf = Effect.fnUntraced(function*(job: JobRecord, path: string) {
          if (job.media_type !== null) return job.media_type
          const sniffed = yield* sniffMediaType(path, { filename: job.filename, declared: job.content_type })
          yield* jobs.recordMediaType(job.id, sniffed)
          return sniffed
        })

        const originalOf = Effect.fnUntraced(function*(job: JobRecord) {
          if (job.object_key === null) return yield* audioMissing()
          const key = job.object_key
          const path = yield* storage.localPath(key).pipe(Effect.mapError(audioMissing))
          const filename = job.filename ?? key.split("/").pop() ?? "audio"
          const file = yield* describeFile(path, key, filename, yield* mediaTypeOf(job, path))
          if (file === undefined) return yield* audioMissing()
          return { key, file } satisfies { key: string; file: ServedFile }
        })

        const link = Effect.fn("Playback.link")(function*(caller: Caller, jobId: JobId) {
          const job = yield* access.load(caller, jobId)
          const { file, key } = yield* originalOf(job)
          const presigned = yield* backend.presign(key, {
            expiresIn: lifetime,
            contentType: file.contentType,
            filename: file.filename
          })
          if (Option.isSome(presigned)) {
            return { url: presigned.value, expires_in: lifetime, storage: "direct" } satisfies PlaybackUrl
          }
          const issued = yield* tokens.issue("audio", jobId, lifetime)
          // A path, not a URL: the spec has the client prefix the API root it used.
          return { url: audioPath(jobId, issued.token), expires_in: issued.expiresIn, storage: "signed" } satisfies PlaybackUrl
        })

        const audio = Effect.fn("Playback.audio")(function*(jobId: JobId, token: string | undefined, request: RequestValidators) {
          yield* tokens.verify("audio", jobId, token)
          const job = yield* jobs.get(jobId)
          if (Option.isNone(job)) return yield* jobNotFound()
          const { file } = yield* originalOf(job.value)
          return replyFor(file, request)
        })

        return Playback.of({ link, audio })
      })
    )

  static readonly layer = Playback.layerWith()
}
