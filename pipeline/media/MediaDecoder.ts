/**
 * Any accepted audio/video file → 16 kHz mono Float32 samples, streamed in chunks (a 10-hour file
 * never sits in memory), plus a cheap probe (container duration, whether an audio stream exists).
 *
 * Backends: the WASM build of ffmpeg (@ffmpeg/core, always available, the default when no native
 * ffmpeg exists) and a native `ffmpeg` on PATH (faster). `backend: "auto"` picks native when
 * `ffmpeg -version` runs at layer construction, else WASM. Both emit the same samples
 * (s16le from ffmpeg's resampler, scaled by 1/32768).
 */
import { Context, Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import { type DecodeFailed, emptyFileReason, NoAudio } from "./DecodeErrors.ts"
import { nativeFfmpegAvailable, makeNativeBackend } from "./FfmpegNative.ts"
import { makeWasmBackend } from "./FfmpegWasm.ts"
import type { MediaProbe } from "./MediaBackend.ts"
import { probeLargeWav } from "./LargeWav.ts"

export { DecodeFailed, NoAudio } from "./DecodeErrors.ts"
export type { MediaProbe } from "./MediaBackend.ts"

/** The decoder's output rate; every consumer (VAD, log-mel) works at this rate. */
export const SAMPLE_RATE = 16_000

export type DecoderChoice = "auto" | "wasm" | "native"

export interface MediaDecoderOptions {
  readonly backend?: DecoderChoice | undefined
  /** Approximate seconds of audio per emitted chunk (default 4). */
  readonly chunkSeconds?: number | undefined
  /** WASM only: chunks decoded ahead of the consumer before the decoder waits (default 4). */
  readonly maxChunksAhead?: number | undefined
}

export class MediaDecoder extends Context.Service<MediaDecoder, {
  /** The backend this layer resolved to. */
  readonly backend: "wasm" | "native"
  /**
   * Decodes the first audio stream of `path`. Fails `NoAudio` when the file has no audio stream or
   * nothing decodes (never hangs: the decoder process/worker is ended with the stream), and
   * `DecodeFailed` when the decoder errors after producing audio. A missing file is a defect.
   */
  decode(path: string): Stream.Stream<Float32Array, NoAudio | DecodeFailed>
  /** Container metadata; `{ durationSeconds: null, hasAudio: false }` for unreadable files. */
  probe(path: string): Effect.Effect<MediaProbe>
}>()("verbatim/pipeline/MediaDecoder") {
  static readonly layer = (options: MediaDecoderOptions = {}) =>
    Layer.effect(
      MediaDecoder,
      Effect.gen(function*() {
        const choice = options.backend ?? "auto"
        const chunkSeconds = options.chunkSeconds ?? 4
        const useNative = choice === "native" || (choice === "auto" && nativeFfmpegAvailable())
        if (choice === "native" && !nativeFfmpegAvailable()) {
          return yield* Effect.die(new Error("MediaDecoder: backend \"native\" requested but no ffmpeg on PATH"))
        }
        const backend = useNative
          ? makeNativeBackend({ chunkSeconds })
          : yield* makeWasmBackend({ chunkSeconds, maxInFlight: options.maxChunksAhead ?? 4 })

        const requireFile = (path: string) =>
          Effect.suspend(() =>
            fs.existsSync(path) && fs.statSync(path).isFile()
              ? Effect.void
              : Effect.die(new Error(`MediaDecoder: no such file ${path}`))
          )

        // An empty file is told apart before ffmpeg, whose two builds word it differently.
        const decodeFile = (path: string): Stream.Stream<Float32Array, NoAudio | DecodeFailed> =>
          fs.statSync(path).size === 0 ? Stream.fail(new NoAudio({ reason: emptyFileReason })) : backend.decode(path)

        const decode = (path: string) =>
          Stream.unwrap(Effect.as(requireFile(path), Stream.suspend(() => decodeFile(path)))).pipe(
            Stream.withSpan("MediaDecoder.decode", { attributes: { backend: backend.name } })
          )

        const probe = Effect.fn("MediaDecoder.probe")(function*(path: string) {
          yield* requireFile(path)
          return probeLargeWav(path) ?? (yield* backend.probe(path))
        })

        return MediaDecoder.of({ backend: backend.name, decode, probe })
      })
    )
}
