/**
 * Upload bodies (the direct-upload PUT and a multipart file part) as Streams read straight
 * from the Node stream underneath. The platform's own adapter pulls with `read()`, which
 * concatenates whatever is buffered into a new buffer (a second copy of most bytes, and more
 * garbage for the collector, which is already doing a full collection for every ~64 MB that
 * arrives), one pull per chunk. Here the chunks Node produces are handed on as they are, in
 * batches of what arrived since the last pull, and the source is paused while
 * `maxBufferedBytes` wait for the consumer, so a slow disk holds the socket back instead of
 * growing the process.
 */
import { type Array as Arr, Cause, Channel, Effect, Exit, Scope, Stream } from "effect"
import { NodeHttpServerRequest, NodeMultipart } from "@effect/platform-node"
import { type HttpServerRequest, Multipart } from "effect/http"
import { finished, Readable } from "node:stream"

/** Bytes read ahead of the consumer before the source is paused. */
export const maxBufferedBytes = 1024 * 1024

/**
 * Chunks of `readable` as they arrive, in batches of what came since the last pull (at most
 * about `maxBufferedBytes`). Ends with the readable; a readable that errs or closes early
 * fails with `onError`. `destroyOnDone` destroys it when the stream ends or is interrupted
 * (else it is paused and left to its owner, like the HTTP server's request).
 */
export const fromReadable = <E>(
  readable: Readable,
  onError: (cause: unknown) => E,
  options: { readonly destroyOnDone: boolean; readonly maxBufferedBytes?: number }
): Stream.Stream<Uint8Array, E> =>
  Stream.fromChannel(Channel.fromTransform((_, scope) =>
    Effect.suspend(() => {
      const limit = options.maxBufferedBytes ?? maxBufferedBytes
      let queue: Array<Uint8Array> = []
      let queued = 0
      let exit: Exit.Exit<never, E | Cause.Done> | undefined
      let wake: (() => void) | undefined
      const notify = () => {
        const resume = wake
        wake = undefined
        resume?.()
      }
      const onData = (chunk: Uint8Array) => {
        queue.push(chunk)
        queued += chunk.byteLength
        if (queued >= limit) readable.pause()
        notify()
      }
      const stop = finished(readable, { readable: true, writable: false }, (error) => {
        exit ??= error ? Exit.fail(onError(error)) : Exit.fail(Cause.Done())
        notify()
      })
      readable.on("data", onData)
      // A listener alone does not start a source someone paused explicitly.
      readable.resume()

      const pull: Effect.Effect<Arr.NonEmptyReadonlyArray<Uint8Array>, E | Cause.Done> = Effect.suspend(() => {
        if (queue.length > 0) {
          const batch = queue as unknown as Arr.NonEmptyReadonlyArray<Uint8Array>
          queue = []
          queued = 0
          if (readable.isPaused() && exit === undefined) readable.resume()
          return Effect.succeed(batch)
        }
        if (exit !== undefined) return exit
        return Effect.flatMap(
          Effect.callback<void>((resume) => {
            wake = () => resume(Effect.void)
            return Effect.sync(() => {
              wake = undefined
            })
          }),
          () => pull
        )
      })

      return Effect.as(
        Scope.addFinalizer(
          scope,
          Effect.sync(() => {
            readable.off("data", onData)
            stop()
            if (options.destroyOnDone) {
              // A late error from the teardown has nobody left to hear it.
              readable.on("error", () => {})
              readable.destroy()
            } else {
              readable.pause()
            }
          })
        ),
        pull
      )
    })
  ))

/** The request body of a raw route, from the Node request when there is one. */
export const requestBody = <E>(
  request: HttpServerRequest.HttpServerRequest,
  onError: (cause: unknown) => E
): Stream.Stream<Uint8Array, E> => {
  const source = NodeHttpServerRequest.toIncomingMessage(request)
  return source instanceof Readable
    // The server tears the body down after the response.
    ? fromReadable(source, onError, { destroyOnDone: false })
    : request.stream.pipe(Stream.mapError(onError))
}

/** A multipart file part's bytes, from the Node parser's stream when there is one. */
export const fileContent = (part: Multipart.File): Stream.Stream<Uint8Array, Multipart.MultipartError> => {
  const source = NodeMultipart.fileToReadable(part) as Readable | undefined
  return source instanceof Readable
    // As the platform's own `content`: the parser's errors arrive on the parts stream too.
    ? fromReadable(source, (cause) => Multipart.MultipartError.fromReason("InternalError", cause), { destroyOnDone: true })
    : part.content
}
