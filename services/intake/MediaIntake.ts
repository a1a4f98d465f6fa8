/**
 * The media side of a submit, shared by multipart uploads, direct uploads and link jobs:
 * which files are accepted (extension and declared type), where a job's media lives in
 * storage (the only place object keys are named), and the 5 GB / 10 hour limits — the size
 * from what was declared or written, the duration from the container when it says.
 */
import { Context, Duration, Effect, Layer, Option } from "effect"
import { MediaDecoder } from "../../pipeline/media/MediaDecoder.ts"
import { FileTooLarge, UnsupportedMedia } from "../../src/contract/api/Errors.ts"
import { maxAudioSeconds } from "../../src/contract/api/JobsApi.ts"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { acceptedExtensions, extensionOf, isAcceptedMime } from "../../src/contract/domain/MediaTypes.ts"
import { MediaStorage } from "../storage/MediaStorage.ts"

/** Storage keys of a job's media. */
export const mediaKeys = {
  /** A multipart upload, stored as it arrives. */
  original: (jobId: JobId | string, extension: string) => `jobs/${jobId}/original.${extension}`,
  /** A direct upload's bytes (PUT to the signed URL) before and after commit. */
  directUpload: (jobId: JobId | string, extension: string) => `uploads/${jobId}/original.${extension}`,
  /** A link job's media once the runner downloaded it. */
  download: (jobId: JobId | string) => `jobs/${jobId}/download`
} as const

export const fileTooLarge = () =>
  new FileTooLarge({ error: "The file is larger than 5 GB: split the recording.", code: "FILE_TOO_LARGE" })

const fileTooLong = (seconds: number) =>
  new FileTooLarge({
    error: `The recording is ${(seconds / 3600).toFixed(1)} hours long; the limit is 10 hours per file: split it.`,
    code: "FILE_TOO_LONG"
  })

export class MediaIntake extends Context.Service<MediaIntake, {
  /** The accepted extension of `filename` (415 BAD_EXT), and a media `contentType` (415 BAD_MIME). */
  accept(filename: string, contentType: string): Effect.Effect<string, UnsupportedMedia>
  /**
   * The stored object's duration when its container declares one; 413 FILE_TOO_LONG over
   * 10 hours. A probe that takes over 30 s counts as unknown (the run finds out later).
   */
  checkDuration(objectKey: string): Effect.Effect<number | undefined, FileTooLarge>
}>()("verbatim/intake/MediaIntake") {
  static readonly layer = Layer.effect(
    MediaIntake,
    Effect.gen(function*() {
      const storage = yield* MediaStorage
      const decoder = yield* MediaDecoder

      const accept = Effect.fn("MediaIntake.accept")(function*(filename: string, contentType: string) {
        const extension = extensionOf(filename)
        if (extension === undefined || !acceptedExtensions.has(extension)) {
          return yield* new UnsupportedMedia({
            error: `Files ending in ${extension ? `.${extension}` : "no extension"} are not accepted; send audio ` +
              "or video such as mp3, m4a, wav, flac, ogg, opus, mp4, mov, webm or mkv.",
            code: "BAD_EXT"
          })
        }
        if (!isAcceptedMime(contentType)) {
          return yield* new UnsupportedMedia({ error: `The file's type ${contentType} is not audio or video.`, code: "BAD_MIME" })
        }
        return extension
      })

      const checkDuration = Effect.fn("MediaIntake.checkDuration")(function*(objectKey: string) {
        const path = yield* storage.localPath(objectKey).pipe(Effect.orDie)
        const probe = yield* decoder.probe(path).pipe(Effect.timeoutOption(Duration.seconds(30)))
        const duration = Option.getOrUndefined(Option.flatMap(probe, (p) => Option.fromNullishOr(p.durationSeconds)))
        if (duration !== undefined && duration > maxAudioSeconds) return yield* fileTooLong(duration)
        return duration
      })

      return MediaIntake.of({ accept, checkDuration })
    })
  )
}
