/**
 * `verbatim transcribe FILE` runs the service's own pipeline locally (no server, no
 * database) and writes the result; `verbatim models list|pull` shows and fetches the
 * Whisper models of the models dir.
 */
import { Console, Effect, Layer, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { noAudioMessage } from "../../pipeline/media/DecodeErrors.ts"
import { inspectMediaContent } from "../../pipeline/media/MediaContent.ts"
import { ModelRegistry } from "../../pipeline/models/ModelRegistry.ts"
import type { FileDiarizer } from "../../pipeline/diarize/FileDiarizer.ts"
import type { Transcriber } from "../../pipeline/Transcriber.ts"
import { SpeechConfig } from "../../services/config/SpeechConfig.ts"
import type { InsightsGenerator } from "../../services/insights/InsightsGenerator.ts"
import { Verbatim } from "../../services/library/Verbatim.ts"
import { LinkResolver } from "../../services/links/LinkResolver.ts"
import { TranscriptFormats } from "../../services/TranscriptFormats.ts"
import { Insights } from "../contract/domain/Insights.ts"
import { TranscriptFormat } from "../contract/domain/Transcript.ts"

const progressBar = (progress: number) => {
  const width = 30
  const filled = Math.round((width * Math.min(100, Math.max(0, progress))) / 100)
  return `[${"#".repeat(filled)}${" ".repeat(width - filled)}] ${Math.round(progress).toString().padStart(3)}%`
}

const isLink = (input: string) => /^https?:\/\//i.test(input)

/** An input refused before or by the pipeline, with the code the API would answer. */
interface InputFailure {
  readonly code: string
  readonly error: string
}

/**
 * The API's wording for what can go wrong with one input (pipeline/media/MediaContent.ts for
 * BAD_MIME, DecodeErrors.ts for NO_AUDIO), so the CLI and the server say the same.
 */
const inputFailure = (failure: unknown): InputFailure => {
  const tagged = failure as { readonly _tag?: string; readonly code?: string; readonly reason?: string; readonly message?: string }
  switch (tagged._tag) {
    case "InputFailure":
      return { code: tagged.code!, error: tagged.message! }
    case "NoAudioInFile":
      return { code: "NO_AUDIO", error: noAudioMessage(tagged.reason ?? "") }
    case "TranscriptionFailed":
      return { code: "SERVICE_ERROR", error: `Transcription failed: ${tagged.reason}.` }
    case "DiarizationFailed":
      return { code: "SERVICE_ERROR", error: `Speaker labelling failed: ${tagged.reason}.` }
    case "LinkRefused":
    case "SourceFailed":
      return { code: tagged.code ?? "SOURCE_UNAVAILABLE", error: tagged.message ?? String(failure) }
    default:
      return { code: "SERVICE_ERROR", error: tagged.message ?? tagged.reason ?? String(failure) }
  }
}

const refuse = (code: string, message: string) => Effect.fail({ _tag: "InputFailure" as const, code, message })

/** The content check of a submit (415 BAD_MIME), before the pipeline starts on the file. */
const checkContent = (file: string) =>
  Effect.flatMap(Effect.promise(() => inspectMediaContent(file)), (content) =>
    content._tag === "NotMedia" ? refuse("BAD_MIME", content.error) : Effect.void)

interface Outcome {
  readonly input: string
  readonly insights?: unknown
  readonly ok: boolean
  readonly duration_seconds?: number
  readonly language?: string | null
  readonly speech_ratio?: number
  readonly seconds?: number
  readonly output?: string
  readonly code?: string
  readonly error?: string
}

/**
 * Where a rendering goes: with `--out`, that file (one input) or a file in that folder (several);
 * without, stdout for one input, `<name>.<ext>` in the working folder for several, and inside
 * the summary with `--json`. `undefined` means stdout or the summary.
 */
const outputPath = (input: string, out: string | undefined, several: boolean, json: boolean, extension: string) => {
  const base = (isLink(input) ? (new URL(input).pathname.split("/").pop() || "link") : path.basename(input)).replace(/\.[^.]*$/, "")
  if (out === undefined) return several && !json ? `${base}.${extension}` : undefined
  if (!several) return out
  fs.mkdirSync(out, { recursive: true })
  return path.join(out, `${base}.${extension}`)
}

const transcribeCommand = Command.make(
  "transcribe",
  {
    inputs: Argument.String("input").pipe(
      Argument.withDescription("Audio or video files, or http(s) links (media, episode pages, feeds)"),
      Argument.variadic({ min: 1 })
    ),
    format: Flag.Literals("format", TranscriptFormat.literals).pipe(Flag.withDefault("txt" as const)),
    language: Flag.String("language").pipe(
      Flag.withDescription("ISO 639-1 code, or auto (default)"),
      Flag.withDefault("auto")
    ),
    words: Flag.Boolean("words").pipe(Flag.withDescription("Per-word times (json only)"), Flag.withDefault(false)),
    diarize: Flag.Boolean("diarize").pipe(Flag.withDescription("Label segments with speakers"), Flag.withDefault(false)),
    prompt: Flag.String("prompt").pipe(
      Flag.withDescription("Names and terms the recording uses, e.g. \"Laura Bennett, Priya\" (Whisper's prompt; its last 224 tokens)"),
      Flag.optional
    ),
    minSpeakers: Flag.Int("min-speakers").pipe(
      Flag.withDescription("With --diarize: at least this many speakers (1..20)"),
      Flag.filter((n) => n >= 1 && n <= 20, (n) => `--min-speakers ${n} is outside 1..20`),
      Flag.optional
    ),
    maxSpeakers: Flag.Int("max-speakers").pipe(
      Flag.withDescription("With --diarize: at most this many speakers (1..20)"),
      Flag.filter((n) => n >= 1 && n <= 20, (n) => `--max-speakers ${n} is outside 1..20`),
      Flag.optional
    ),
    maxCharsPerLine: Flag.Int("max-chars-per-line").pipe(
      Flag.withDescription("srt/vtt: at most this many characters per cue line (10..200; 2 lines a cue unless --max-lines-per-cue)"),
      Flag.filter((n) => n >= 10 && n <= 200, (n) => `--max-chars-per-line ${n} is outside 10..200`),
      Flag.optional
    ),
    maxLinesPerCue: Flag.Int("max-lines-per-cue").pipe(
      Flag.withDescription("srt/vtt: at most this many lines per cue (1..5)"),
      Flag.filter((n) => n >= 1 && n <= 5, (n) => `--max-lines-per-cue ${n} is outside 1..5`),
      Flag.optional
    ),
    maxCueSeconds: Flag.Finite("max-cue-seconds").pipe(
      Flag.withDescription("srt/vtt: no cue longer than this many seconds (1..30)"),
      Flag.filter((n) => n >= 1 && n <= 30, (n) => `--max-cue-seconds ${n} is outside 1..30`),
      Flag.optional
    ),
    translate: Flag.Boolean("translate").pipe(
      Flag.withDescription("English text from speech in any language (needs a multilingual model, e.g. whisper-base)"),
      Flag.withDefault(false)
    ),
    insights: Flag.Boolean("insights").pipe(
      Flag.withDescription(
        `Also make insights as JSON (${Object.keys(Insights.fields).filter((field) => field !== "providers").join(", ")})`
      ),
      Flag.withDefault(false)
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDescription("Print one JSON summary on stdout (transcripts inside it unless --out)"),
      Flag.withDefault(false)
    ),
    out: Flag.String("out").pipe(
      Flag.withDescription("Write here instead of stdout (a folder when there are several inputs)"),
      Flag.optional
    )
  },
  Effect.fn(function*({ inputs, format, language, words, diarize, prompt: promptFlag, translate, insights, json, out, ...hints }) {
    const minSpeakers = Option.getOrUndefined(hints.minSpeakers)
    const maxSpeakers = Option.getOrUndefined(hints.maxSpeakers)
    const shape = {
      maxCharsPerLine: Option.getOrUndefined(hints.maxCharsPerLine),
      maxLinesPerCue: Option.getOrUndefined(hints.maxLinesPerCue),
      maxCueSeconds: Option.getOrUndefined(hints.maxCueSeconds)
    }
    // The server's rules: speaker hints need diarization, caption shaping needs srt or vtt.
    const misuse = (minSpeakers !== undefined || maxSpeakers !== undefined) && !diarize
      ? "--min-speakers and --max-speakers need --diarize"
      : minSpeakers !== undefined && maxSpeakers !== undefined && minSpeakers > maxSpeakers
      ? "--min-speakers is above --max-speakers"
      : Object.values(shape).some((v) => v !== undefined) && format !== "srt" && format !== "vtt"
      ? "--max-chars-per-line, --max-lines-per-cue and --max-cue-seconds shape subtitles: use them with --format srt or vtt"
      : undefined
    if (misuse !== undefined) {
      yield* Console.error(`verbatim: ${misuse}`)
      process.exitCode = 2
      return
    }
    const modelOptions = {
      ...(Option.isSome(promptFlag) ? { prompt: promptFlag.value } : {}),
      ...(translate ? { task: "translate" as const } : {}),
      ...(minSpeakers === undefined ? {} : { minSpeakers }),
      ...(maxSpeakers === undefined ? {} : { maxSpeakers })
    }
    const verbatim = yield* Verbatim
    const resolver = yield* LinkResolver
    const interactive = process.stderr.isTTY === true
    const several = inputs.length > 1
    const outcomes: Array<Outcome> = []

    for (const input of inputs) {
      let shown = -1
      const started = performance.now()
      const onProgress = (progress: number) => {
        const step = Math.floor(progress / 5)
        if (step === shown) return
        shown = step
        process.stderr.write(interactive ? `\r${progressBar(progress)}` : `${progressBar(progress)}\n`)
      }
      const local = isLink(input)
        ? Effect.acquireUseRelease(
          Effect.promise(() => fs.promises.mkdtemp(path.join(os.tmpdir(), "verbatim-link-"))),
          (dir) =>
            Effect.gen(function*() {
              const resolved = yield* resolver.resolve(input)
              yield* Console.error(`${input}: downloading ${resolved.mediaUrl}`)
              const downloaded = yield* resolver.download(resolved, path.join(dir, "media"))
              yield* checkContent(downloaded.path)
              return yield* verbatim.transcribe(downloaded.path, { language, words, diarize, onProgress, ...modelOptions })
            }),
          (dir) => Effect.promise(() => fs.promises.rm(dir, { recursive: true, force: true }))
        )
        : fs.existsSync(input)
        ? Effect.andThen(checkContent(input), verbatim.transcribe(input, { language, words, diarize, onProgress, ...modelOptions }))
        : refuse("NO_SUCH_FILE", `There is no such file: ${input}.`)
      const result = yield* Effect.result(local)
      if (result._tag === "Failure") {
        const failure = inputFailure(result.failure)
        outcomes.push({ input, ok: false, ...failure })
        if (interactive && shown >= 0) process.stderr.write("\n")
        yield* Console.error(`verbatim: ${input}: ${failure.error} (${failure.code})`)
        continue
      }
      const transcription = result.success
      const seconds = (performance.now() - started) / 1000
      process.stderr.write(`${interactive ? "\r" : ""}${progressBar(100)}\n`)
      yield* Console.error(
        `${isLink(input) ? input : path.basename(input)}: ${transcription.durationSeconds.toFixed(1)} s of audio, ` +
          `language ${transcription.language ?? "-"}, speech ${(transcription.speechRatio * 100).toFixed(0)}%, ` +
          `${seconds.toFixed(1)} s (${(transcription.durationSeconds / seconds).toFixed(1)}× real time)`
      )
      const rendered = yield* verbatim.render(transcription.transcript, format, isLink(input) ? undefined : path.basename(input), shape)
      const target = outputPath(input, Option.getOrUndefined(out), several, json, rendered.extension)
      let inline: unknown = undefined
      if (target === undefined && json) {
        const text = new TextDecoder().decode(rendered.body)
        inline = format === "json" ? JSON.parse(text) : format === "docx" ? Buffer.from(rendered.body).toString("base64") : text
      } else if (target === undefined) {
        process.stdout.write(rendered.body)
        if (format !== "docx") process.stdout.write("\n")
      } else {
        fs.writeFileSync(target, rendered.body)
        if (!json) yield* Console.error(`wrote ${target}`)
      }
      // Insights go into the summary (--json), next to the transcript file, or after it on stdout.
      let made: unknown = undefined
      if (insights) {
        const generated = yield* Effect.result(verbatim.insights(transcription.transcript))
        made = generated._tag === "Success"
          ? generated.success
          : { error: generated.failure._tag === "NotEnoughSpeech" ? `too little speech for insights (${generated.failure.words} words, ${generated.failure.minimum} needed)` : "insights could not be made" }
        if (!json && target !== undefined) fs.writeFileSync(target.replace(/\.[^.]*$/, ".insights.json"), JSON.stringify(made, null, 2))
        else if (!json) process.stdout.write(`${JSON.stringify(made, null, 2)}\n`)
      }
      outcomes.push({
        input,
        ok: true,
        ...(made === undefined ? {} : { insights: made }),
        duration_seconds: transcription.durationSeconds,
        language: transcription.language,
        speech_ratio: transcription.speechRatio,
        seconds: Math.round(seconds * 10) / 10,
        ...(target === undefined ? {} : { output: target }),
        ...(inline === undefined ? {} : { transcript: inline })
      })
    }
    if (json) yield* Console.log(JSON.stringify({ ok: outcomes.every((o) => o.ok), results: outcomes }, null, 2))
    if (outcomes.some((o) => !o.ok)) process.exitCode = 1
  })
).pipe(Command.withDescription("Transcribe files or links locally with the service's pipeline"))

const modelsList = Command.make(
  "list",
  {},
  Effect.fn(function*() {
    const registry = yield* ModelRegistry
    const config = yield* SpeechConfig
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
 * The speech commands, given the pipeline, link resolver and model registry layers by the
 * entry point (adapters do not compose layers themselves).
 */
export const speechCommands = <EP, RP, EI, RI, EL, RL, EM, RM>(layers: {
  readonly pipeline: Layer.Layer<Transcriber | FileDiarizer, EP, RP>
  readonly insights: Layer.Layer<InsightsGenerator, EI, RI>
  readonly links: Layer.Layer<LinkResolver, EL, RL>
  readonly models: Layer.Layer<ModelRegistry, EM, RM>
}) =>
  [
    transcribeCommand.pipe(
      Command.provide(
        Layer.mergeAll(Verbatim.layer.pipe(Layer.provide(Layer.mergeAll(layers.pipeline, TranscriptFormats.layer, layers.insights))), layers.links)
      )
    ),
    Command.make("models").pipe(
      Command.withDescription("Whisper models: list, pull"),
      Command.withSubcommands([modelsList, modelsPull]),
      Command.provide(layers.models)
    )
  ] as const
