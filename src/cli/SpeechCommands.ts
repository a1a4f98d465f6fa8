/**
 * `verbatim transcribe FILE` runs the service's own pipeline locally (no server, no
 * database) and writes the result; `verbatim models list|pull` shows and fetches the
 * Whisper models of the models dir.
 */
import { Console, Effect, Layer, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as fs from "node:fs"
import * as path from "node:path"
import { ModelRegistry } from "../../pipeline/models/ModelRegistry.ts"
import { Transcriber } from "../../pipeline/Transcriber.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { TranscriptFormats } from "../../services/TranscriptFormats.ts"
import { TranscriptFormat } from "../contract/domain/Transcript.ts"

const progressBar = (progress: number) => {
  const width = 30
  const filled = Math.round((width * Math.min(100, Math.max(0, progress))) / 100)
  return `[${"#".repeat(filled)}${" ".repeat(width - filled)}] ${Math.round(progress).toString().padStart(3)}%`
}

const transcribeCommand = Command.make(
  "transcribe",
  {
    file: Argument.File("file", { mustExist: true }).pipe(Argument.withDescription("Audio or video file")),
    format: Flag.Literals("format", TranscriptFormat.literals).pipe(Flag.withDefault("txt" as const)),
    language: Flag.String("language").pipe(
      Flag.withDescription("ISO 639-1 code, or auto (default)"),
      Flag.withDefault("auto")
    ),
    words: Flag.Boolean("words").pipe(Flag.withDescription("Per-word times (json only)"), Flag.withDefault(false)),
    out: Flag.String("out").pipe(Flag.withDescription("Write here instead of stdout"), Flag.optional)
  },
  Effect.fn(function*({ file, format, language, words, out }) {
    const transcriber = yield* Transcriber
    const formats = yield* TranscriptFormats
    const interactive = process.stderr.isTTY === true
    let shown = -1
    const started = performance.now()
    const result = yield* transcriber.transcribe(
      { path: path.resolve(file), language, wordTimestamps: words },
      (progress) =>
        Effect.sync(() => {
          const step = Math.floor(progress / 5)
          if (step === shown) return
          shown = step
          process.stderr.write(interactive ? `\r${progressBar(progress)}` : `${progressBar(progress)}\n`)
        })
    )
    const seconds = (performance.now() - started) / 1000
    process.stderr.write(`${interactive ? "\r" : ""}${progressBar(100)}\n`)
    yield* Console.error(
      `${path.basename(file)}: ${result.durationSeconds.toFixed(1)} s of audio, language ${result.language ?? "-"}, ` +
        `speech ${(result.speechRatio * 100).toFixed(0)}%, ${seconds.toFixed(1)} s (${(result.durationSeconds / seconds).toFixed(1)}× real time)`
    )
    const rendered = yield* formats.render(result.transcript, format, { filename: path.basename(file) })
    if (Option.isSome(out)) {
      fs.writeFileSync(out.value, rendered.body)
      yield* Console.error(`wrote ${out.value}`)
    } else {
      process.stdout.write(rendered.body)
      if (format !== "docx") process.stdout.write("\n")
    }
  })
).pipe(Command.withDescription("Transcribe a file locally with the service's pipeline"))

const modelsList = Command.make(
  "list",
  {},
  Effect.fn(function*() {
    const registry = yield* ModelRegistry
    const config = yield* AppConfig
    const rows = registry.specs.map((spec) => {
      const dir = path.resolve(config.modelsDir, spec.folder)
      const present = spec.files.every((f) => fs.existsSync(path.join(dir, f.file)))
      const bytes = spec.files.reduce((sum, f) => sum + f.bytes, 0)
      return {
        name: spec.name,
        default: spec.name === config.model,
        present,
        size_mb: Math.round(bytes / 1e5) / 10,
        dir
      }
    })
    yield* Console.log(JSON.stringify(rows, null, 2))
  })
).pipe(Command.withDescription("Models the service knows, and which are on disk"))

const modelsPull = Command.make(
  "pull",
  { name: Argument.String("name").pipe(Argument.withDescription("whisper-base or whisper-tiny.en")) },
  Effect.fn(function*({ name }) {
    const registry = yield* ModelRegistry
    const resolved = yield* registry.resolve(name)
    yield* Console.log(JSON.stringify({ name: resolved.name, dir: resolved.dir, ready: true }, null, 2))
  })
).pipe(Command.withDescription("Download a model into the models dir (checksums verified)"))

/**
 * The speech commands, given the pipeline and model registry layers by the entry point
 * (adapters do not compose layers themselves).
 */
export const speechCommands = <EP, RP, EM, RM>(layers: {
  readonly pipeline: Layer.Layer<Transcriber, EP, RP>
  readonly models: Layer.Layer<ModelRegistry, EM, RM>
}) =>
  [
    transcribeCommand.pipe(Command.provide(Layer.mergeAll(layers.pipeline, TranscriptFormats.layer))),
    Command.make("models").pipe(
      Command.withDescription("Whisper models: list, pull"),
      Command.withSubcommands([modelsList, modelsPull]),
      Command.provide(layers.models)
    )
  ] as const
