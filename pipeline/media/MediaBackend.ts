/** What each decoder backend (WASM or native ffmpeg) provides to MediaDecoder. */
import type { Effect, Stream } from "effect"
import type { DecodeFailed, NoAudio } from "./DecodeErrors.ts"

export interface MediaProbe {
  /** Container duration in seconds; null when the container does not say (or cannot be read). */
  readonly durationSeconds: number | null
  /** Whether the container lists at least one audio stream. */
  readonly hasAudio: boolean
}

export interface DecoderBackend {
  readonly name: "wasm" | "native"
  /** 16 kHz mono Float32 samples in chunks; fails NoAudio when nothing decodes. */
  readonly decode: (path: string) => Stream.Stream<Float32Array, NoAudio | DecodeFailed>
  readonly probe: (path: string) => Effect.Effect<MediaProbe>
}
