/**
 * Walks a multipart body: fields to `onField`, files to `onFile` (which streams them to
 * storage). The body's own limits become the route's refusals: a part or body over its size
 * limit is `tooLarge`, broken framing (or too many parts, a field over its limit) is
 * `unreadable` with the parser's reason.
 */
import { Effect, Stream } from "effect"
import { Multipart } from "effect/http"

export const forEachPart = <E, R, TooLarge, Unreadable>(
  parts: Stream.Stream<Multipart.Part, Multipart.MultipartError>,
  handlers: {
    readonly onField: (key: string, value: string) => void
    readonly onFile: (part: Multipart.File) => Effect.Effect<void, E | Multipart.MultipartError, R>
    readonly tooLarge: () => TooLarge
    readonly unreadable: (reason: string) => Unreadable
  }
): Effect.Effect<void, Exclude<E, Multipart.MultipartError> | TooLarge | Unreadable, R> =>
  Stream.runForEach(parts, (part) => {
    if (part._tag === "Field") {
      handlers.onField(part.key, part.value)
      return Effect.void
    }
    return handlers.onFile(part as Multipart.File)
  }).pipe(
    // Also reached from inside `onFile`: the file part's own bytes carry the parser's limits.
    Effect.catchIf(Multipart.isMultipartError, (error) =>
      Effect.fail(
        error.reason._tag === "FileTooLarge" || error.reason._tag === "BodyTooLarge"
          ? handlers.tooLarge()
          : handlers.unreadable(error.reason._tag)
      ))
  ) as Effect.Effect<void, Exclude<E, Multipart.MultipartError> | TooLarge | Unreadable, R>
