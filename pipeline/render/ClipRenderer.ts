/**
 * Renders one clip: source media + window + timed words → a captioned 1080×1920 mp4 (see
 * RenderPlan for the command and the reframing rule, CaptionScript for the captions).
 *
 * Backends: a native `ffmpeg`/`ffprobe` on PATH when present (`auto` / `native`), else the
 * @ffmpeg/core WASM build in a worker thread (single-threaded: expect several seconds of
 * rendering per second of clip; `bench/clips.ts` measures it). Either way the work runs off
 * the event loop, reports progress (0..1) through `onProgress`, and stops when the calling
 * fiber is interrupted: the worker is terminated or the child killed, and the partial output
 * removed. The mp4 appears at `outputPath` only complete (written beside it, then renamed).
 *
 * A render that ffmpeg refuses fails with `RenderFailed` carrying ffmpeg's last error lines; a
 * worker or child that dies is a defect (the task engine retries it).
 */
import { Context, Effect, Layer, Queue, Schema } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { Worker } from "node:worker_threads"
import { nativeFfmpegAvailable } from "../media/FfmpegNative.ts"
import { type CaptionStyle, captionScript, type TimedWord } from "./CaptionScript.ts"
import { inputOptions, probeLargeWav } from "../media/LargeWav.ts"
import { probeArgs, progressSeconds, type RenderPaths, renderArgs, sourceStreams } from "./RenderPlan.ts"
import type { RenderWorkerInput, RenderWorkerMessage } from "./renderWorker.ts"

export class RenderFailed extends Schema.TaggedError<RenderFailed>()("RenderFailed", {
  reason: Schema.String
}) {}

export interface ClipRenderSpec {
  readonly inputPath: string
  readonly outputPath: string
  readonly startSeconds: number
  readonly durationSeconds: number
  readonly style: CaptionStyle
  /** Times in seconds from the clip's start. */
  readonly words: ReadonlyArray<TimedWord>
  /** Drawn on audio-only clips. */
  readonly title: string
}

export type RenderBackendChoice = "auto" | "wasm" | "native"

const require = createRequire(import.meta.url)

/** The caption font, shipped through the npm registry (`dejavu-fonts-ttf`). */
export const captionFontFile = (): string =>
  path.join(path.dirname(require.resolve("dejavu-fonts-ttf/package.json")), "ttf", "DejaVuSans-Bold.ttf")

const reasonOf = (stderrTail: ReadonlyArray<string>, fallback: string) => {
  const lines = stderrTail.map((line) => line.trim()).filter((line) => line !== "" && line !== "Aborted()")
  return lines.length === 0 ? fallback : lines.slice(-4).join(" | ").slice(0, 600)
}

interface Outcome {
  readonly ret: number
  readonly stderrTail: ReadonlyArray<string>
  readonly stdout: string
}

/** One WASM worker run; progress seconds go to `onSeconds`. Interrupting terminates the worker. */
const wasmRun = (
  compiled: Effect.Effect<WebAssembly.Module>,
  data: Omit<RenderWorkerInput, "wasmModule">,
  onSeconds: (seconds: number) => Effect.Effect<void>
) =>
  Effect.scoped(Effect.gen(function*() {
    const wasmModule = yield* compiled
    const inbox = yield* Queue.unbounded<RenderWorkerMessage>()
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const worker = new Worker(new URL("./renderWorker.ts", import.meta.url), {
          workerData: { ...data, wasmModule } satisfies RenderWorkerInput
        })
        worker.on("message", (message: RenderWorkerMessage) => Queue.offerUnsafe(inbox, message))
        worker.on("error", (error) => Queue.offerUnsafe(inbox, { _tag: "failed", message: error.message }))
        worker.on("exit", (code) => Queue.offerUnsafe(inbox, { _tag: "failed", message: `render worker exited (${code})` }))
        return worker
      }),
      (worker) => Effect.promise(() => worker.terminate())
    )
    while (true) {
      const message = yield* Queue.take(inbox)
      if (message._tag === "progress") yield* onSeconds(message.seconds)
      else if (message._tag === "failed") return yield* Effect.die(new Error(`ffmpeg (wasm) crashed: ${message.message}`))
      else return message satisfies Outcome
    }
  }))

/** One native run; interrupting kills the child. */
const nativeRun = (command: "ffmpeg" | "ffprobe", args: ReadonlyArray<string>, onSeconds: (seconds: number) => Effect.Effect<void>) =>
  Effect.scoped(Effect.gen(function*() {
    const inbox = yield* Queue.unbounded<RenderWorkerMessage>()
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(command, [...args], { stdio: ["ignore", "pipe", "pipe"] })
        const stderr: Array<string> = []
        let stdout = ""
        let partial = ""
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
        child.stderr.on("data", (chunk: Buffer) => {
          const lines = (partial + chunk.toString("utf8")).split(/[\r\n]/)
          partial = lines.pop() ?? ""
          for (const line of lines) {
            const seconds = progressSeconds(line)
            if (seconds !== undefined) Queue.offerUnsafe(inbox, { _tag: "progress", seconds })
            else if (line.trim() !== "") {
              stderr.push(line)
              if (stderr.length > 30) stderr.shift()
            }
          }
        })
        child.on("error", (error) => Queue.offerUnsafe(inbox, { _tag: "failed", message: error.message }))
        child.on("close", (code) => Queue.offerUnsafe(inbox, { _tag: "done", ret: code ?? 1, stderrTail: stderr, stdout }))
        return child
      }),
      (child) => Effect.sync(() => void (child.exitCode === null && child.kill("SIGKILL")))
    )
    while (true) {
      const message = yield* Queue.take(inbox)
      if (message._tag === "progress") yield* onSeconds(message.seconds)
      else if (message._tag === "failed") return yield* Effect.die(new Error(`ffmpeg could not run: ${message.message}`))
      else return message satisfies Outcome
    }
  }))

export class ClipRenderer extends Context.Service<ClipRenderer, {
  readonly backend: "wasm" | "native"
  render(spec: ClipRenderSpec, onProgress: (fraction: number) => Effect.Effect<void>): Effect.Effect<void, RenderFailed>
}>()("verbatim/render/ClipRenderer") {
  static readonly layer = (options: { readonly backend?: RenderBackendChoice | undefined } = {}) =>
    Layer.effect(
      ClipRenderer,
      Effect.gen(function*() {
        const choice = options.backend ?? "auto"
        const native = choice === "native" || (choice === "auto" && nativeFfmpegAvailable())
        const compiled = yield* Effect.cached(
          Effect.promise(() => fs.promises.readFile(require.resolve("@ffmpeg/core/wasm")).then((b) => WebAssembly.compile(b)))
        )
        const font = captionFontFile()
        const noProgress = () => Effect.void

        const render = Effect.fn("ClipRenderer.render")(function*(
          spec: ClipRenderSpec,
          onProgress: (fraction: number) => Effect.Effect<void>
        ) {
          const partial = `${spec.outputPath}.partial.mp4`
          const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-clip-"))
          const cleanUp = Effect.sync(() => {
            fs.rmSync(scratch, { recursive: true, force: true })
            fs.rmSync(partial, { force: true })
          })
          // A WAV over 4 GiB whose header sizes were wrapped or capped: ffmpeg reads it to the end of
          // the file (a clip past the stated length would find no audio), and ffprobe is not asked
          // about it (it walks the data past the stated end as chunk headers, for minutes): such a
          // file is one audio stream, which its format chunk already told LargeWav.
          const inputOpts = inputOptions(spec.inputPath, native ? "native" : "wasm")
          const largeWav = probeLargeWav(spec.inputPath) !== undefined
          return yield* Effect.gen(function*() {
            const probed: Outcome = largeWav
              ? { ret: 0, stderrTail: [], stdout: JSON.stringify({ streams: [{ codec_type: "audio" }] }) }
              : native
              ? yield* nativeRun("ffprobe", probeArgs(spec.inputPath), noProgress)
              : yield* wasmRun(compiled, {
                inputPath: spec.inputPath,
                task: "probe",
                args: probeArgs("/in/input"),
                captions: undefined,
                fontFiles: [],
                outputPath: partial
              }, noProgress)
            const streams = sourceStreams(probed.stdout)
            if (!streams.hasAudio) {
              return yield* new RenderFailed({ reason: `The source has no audio stream (${reasonOf(probed.stderrTail, "ffprobe found none")}).` })
            }
            const script = spec.style === "none" && streams.video !== undefined
              ? undefined
              : captionScript({
                style: spec.style,
                words: spec.words,
                durationSeconds: spec.durationSeconds,
                title: streams.video === undefined ? spec.title : undefined
              })
            const window = { startSeconds: spec.startSeconds, durationSeconds: spec.durationSeconds }
            const report = (seconds: number) => onProgress(Math.min(1, Math.max(0, seconds / spec.durationSeconds)))
            let outcome: Outcome
            if (native) {
              const captionsPath = path.join(scratch, "captions.ass")
              if (script !== undefined) fs.writeFileSync(captionsPath, script)
              const paths: RenderPaths = {
                input: spec.inputPath,
                inputOptions: inputOpts,
                output: partial,
                captions: script === undefined ? undefined : captionsPath,
                fontsDir: path.dirname(font)
              }
              outcome = yield* nativeRun("ffmpeg", renderArgs(streams, window, paths), report)
            } else {
              const paths: RenderPaths = {
                input: "/in/input",
                inputOptions: inputOpts,
                output: "/out.mp4",
                captions: script === undefined ? undefined : "/work/captions.ass",
                fontsDir: "/fonts"
              }
              outcome = yield* wasmRun(compiled, {
                inputPath: spec.inputPath,
                task: "render",
                args: renderArgs(streams, window, paths),
                captions: script,
                fontFiles: [font],
                outputPath: partial
              }, report)
            }
            if (outcome.ret !== 0 || !fs.existsSync(partial)) {
              return yield* new RenderFailed({ reason: `ffmpeg failed (exit ${outcome.ret}): ${reasonOf(outcome.stderrTail, "no output")}` })
            }
            fs.renameSync(partial, spec.outputPath)
            yield* onProgress(1)
          }).pipe(Effect.ensuring(cleanUp))
        })

        return ClipRenderer.of({ backend: native ? "native" : "wasm", render })
      })
    )
}
