/**
 * Decoder backend on a native `ffmpeg` / `ffprobe` found on PATH. Streams the child's stdout
 * (Node pauses the pipe when the consumer is slow, so memory stays bounded) and kills the child
 * when the stream ends early or is interrupted.
 */
import { Cause, Effect, Stream } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { decodeFailure, type DecodeFailed, type NoAudio } from "./DecodeErrors.ts"
import { parseProbe } from "./FfmpegWasm.ts"
import type { DecoderBackend, MediaProbe } from "./MediaBackend.ts"
import { Pcm16Reader } from "./Pcm16.ts"
import { inputOptions } from "./LargeWav.ts"

const SAMPLE_RATE = 16_000

/** True when `ffmpeg -version` runs (checked once when a layer is built, not per decode). */
export const nativeFfmpegAvailable = (): boolean => {
  const probe = spawnSync("ffmpeg", ["-hide_banner", "-version"], { stdio: "ignore", timeout: 10_000 })
  return probe.status === 0
}

const stderrTail = (lines: Array<string>, text: string) => {
  for (const line of text.split(/\r?\n|\r/)) {
    if (line.trim() === "") continue
    lines.push(line)
    if (lines.length > 40) lines.shift()
  }
}

export const makeNativeBackend = (options: { readonly chunkSeconds: number }): DecoderBackend => {
  const chunkSamples = Math.max(512, Math.round(options.chunkSeconds * SAMPLE_RATE))

  const decode = (path: string): Stream.Stream<Float32Array, NoAudio | DecodeFailed> =>
    Stream.unwrap(Effect.gen(function*() {
      const child = yield* Effect.acquireRelease(
        Effect.sync(() =>
          spawn(
            "ffmpeg",
            ["-nostdin", "-hide_banner", "-loglevel", "error", ...inputOptions(path, "native"), "-i", path, "-vn", "-sn", "-dn", "-map", "0:a:0", "-ac",
              "1", "-ar", String(SAMPLE_RATE), "-f", "s16le", "pipe:1"],
            { stdio: ["ignore", "pipe", "pipe"] }
          )
        ),
        (child) => Effect.sync(() => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
        })
      )
      const errors: Array<string> = []
      child.stderr.setEncoding("utf8")
      child.stderr.on("data", (text: string) => stderrTail(errors, text))
      const exited = new Promise<number | null>((resolve) => {
        child.on("error", (error) => {
          errors.push(error.message)
          resolve(-1)
        })
        child.on("close", (code) => resolve(code))
      })
      // Re-chunk to `chunkSamples`: the pipe yields whatever it holds (up to 64 KiB at a time).
      const iterator = child.stdout[Symbol.asyncIterator]()
      const reader = new Pcm16Reader()
      let decoded = 0
      let pending = new Float32Array(chunkSamples)
      let filled = 0
      const ready: Array<Float32Array> = []
      const take = (samples: Float32Array) => {
        let at = 0
        while (at < samples.length) {
          const n = Math.min(samples.length - at, chunkSamples - filled)
          pending.set(samples.subarray(at, at + n), filled)
          filled += n
          at += n
          if (filled === chunkSamples) {
            ready.push(pending)
            pending = new Float32Array(chunkSamples)
            filled = 0
          }
        }
      }
      const pull: Effect.Effect<readonly [Float32Array], NoAudio | DecodeFailed | Cause.Done> = Effect.suspend(() => {
        const next = ready.shift()
        if (next) return Effect.succeed([next] as const)
        return Effect.promise(() => iterator.next() as Promise<IteratorResult<Buffer>>).pipe(
          Effect.flatMap((step): Effect.Effect<readonly [Float32Array], NoAudio | DecodeFailed | Cause.Done> => {
            if (!step.done) {
              const samples = reader.push(step.value)
              decoded += samples.length
              take(samples)
              return pull
            }
            if (filled > 0) {
              const last = pending.slice(0, filled)
              filled = 0
              return Effect.succeed([last] as const)
            }
            return Effect.flatMap(
              Effect.promise(() => exited),
              (code): Effect.Effect<never, NoAudio | DecodeFailed | Cause.Done> => {
                const failure = decodeFailure(errors, decoded, SAMPLE_RATE, code === 0, path)
                return failure ? Effect.fail(failure) : Cause.done()
              }
            )
          })
        )
      })
      return Stream.fromPull(Effect.succeed(pull))
    }))

  const probe = (path: string): Effect.Effect<MediaProbe> =>
    Effect.callback<MediaProbe>((resume) => {
      const child = spawn(
        "ffprobe",
        ["-v", "error", "-show_entries", "format=duration:stream=codec_type", "-of", "json", path],
        { stdio: ["ignore", "pipe", "ignore"] }
      )
      let out = ""
      child.stdout.setEncoding("utf8")
      child.stdout.on("data", (text: string) => (out += text))
      child.on("error", () => resume(Effect.succeed({ durationSeconds: null, hasAudio: false })))
      child.on("close", () => resume(Effect.succeed(parseProbe(out))))
      return Effect.sync(() => {
        if (child.exitCode === null) child.kill("SIGKILL")
      })
    })

  return { name: "native", decode, probe }
}
