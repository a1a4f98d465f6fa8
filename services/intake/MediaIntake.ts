/**
 * The media side of a submit, shared by multipart uploads, direct uploads and link jobs:
 * which files are accepted (extension and declared type), where a job's media lives in
 * storage (the only place object keys are named), and the 5 GB / 10 hour limits — the size
 * from what was declared or written, the duration from the container when it says.
 */
import { Context, Duration, Effect, Layer, Option } from "effect"
import { inspectMediaContent } from "../../pipeline/media/MediaContent.ts"
import { MediaDecoder } from "../../pipeline/media/MediaDecoder.ts"
import { FileTooLarge, UnsupportedMedia, ValidationFailed } from "../../src/contract/api/Errors.ts"
import { maxAudioSeconds } from "../../src/contract/api/JobsApi.ts"
import { acceptedExtensions, extensionOf, isAcceptedMime } from "../../src/contract/domain/MediaTypes.ts"
import { type MediaHints, mediaTypeFrom } from "../playback/MediaType.ts"
import { MediaStorage } from "../storage/MediaStorage.ts"

export { mediaKeys } from "../storage/MediaKeys.ts"

/** Names longer than this are refused, as `uploads/init` refuses them (`filename` ≤ 512). */
export const maxFilenameLength = 512

export const fileTooLarge = () =>
  new FileTooLarge({ error: "The file is larger than 5 GB: split the recording.", code: "FILE_TOO_LARGE" })

const fileTooLong = (seconds: number) =>
  new FileTooLarge({
    error: `The recording is ${(seconds / 3600).toFixed(1)} hours long; the limit is 10 hours per file: split it.`,
    code: "FILE_TOO_LONG"
  })

export class MediaIntake extends Context.Service<MediaIntake, {
  /** The accepted extension of `filename` (415 BAD_EXT), and a media `contentType` (415 BAD_MIME). */
  accept(filename: string, contentType: string): Effect.Effect<string, UnsupportedMedia | ValidationFailed>
  /**
   * Looks at the stored bytes: a recognised non-media format, or plain text, is refused with
   * 415 BAD_MIME before a job exists. Unrecognised binary goes on (the decoder has the last
   * word: a file it cannot read ends the job `NO_AUDIO`). Answers the type playback will
   * serve the media as (`mediaTypeFrom`, with the name and declared type as hints).
   */
  sniff(objectKey: string, hints?: MediaHints): Effect.Effect<string, UnsupportedMedia>
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
        if (filename.includes("\u0000") || !filename.isWellFormed()) {
          return yield* new ValidationFailed({
            error: "The file name holds a NUL character or a broken UTF-16 sequence.",
            code: "VALIDATION_FAILED",
            detail: [{ loc: ["body", "file", "filename"], msg: "Not storable text" }]
          })
        }
        if (filename.length > maxFilenameLength) {
          return yield* new ValidationFailed({
            error: `The file name is ${filename.length} characters long; the limit is ${maxFilenameLength}.`,
            code: "VALIDATION_FAILED",
            detail: [{ loc: ["body", "file", "filename"], msg: `At most ${maxFilenameLength} characters` }]
          })
        }
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

      const sniff = Effect.fn("MediaIntake.sniff")(function*(objectKey: string, hints: MediaHints = {}) {
        const path = yield* storage.localPath(objectKey).pipe(Effect.orDie)
        // The same check and sentence as the CLI's (pipeline/media/MediaContent.ts).
        const content = yield* Effect.promise(() => inspectMediaContent(path))
        if (content._tag === "NotMedia") return yield* new UnsupportedMedia({ error: content.error, code: "BAD_MIME" })
        return mediaTypeFrom(content.mime, hints)
      })

      return MediaIntake.of({ accept, sniff, checkDuration })
    })
  )
}
