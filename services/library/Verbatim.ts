/**
 * The embeddable library's use case: transcribe a file or a buffer in-process with the same
 * pipeline the server's jobs use (decode → voice activity → Whisper → phrases; speakers when
 * asked), render any format with the same renderers as `GET /v1/jobs/{id}/result`, and make
 * insights with the same generator as `GET /v1/jobs/{id}/insights`.
 * No server, database or account is involved. A buffer is written to a private temporary
 * file first (the decoder reads files, streaming) and removed afterwards.
 */
import { Context, Effect, Layer } from "effect"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { assignSpeakers } from "../../pipeline/diarize/AssignSpeakers.ts"
import type { DiarizationFailed } from "../../pipeline/diarize/Diarizer.ts"
import { FileDiarizer } from "../../pipeline/diarize/FileDiarizer.ts"
import { type NoAudioInFile, Transcriber, type TranscriptionFailed } from "../../pipeline/Transcriber.ts"
import { submitDefaults } from "../../src/contract/api/JobsApi.ts"
import type { Transcript, TranscriptFormat } from "../../src/contract/domain/Transcript.ts"
import type { Insights } from "../../src/contract/domain/Insights.ts"
import type { InsightsUnavailable, NotEnoughSpeech } from "../insights/InsightsErrors.ts"
import { InsightsGenerator } from "../insights/InsightsGenerator.ts"
import { type CaptionShape, type RenderedTranscript, TranscriptFormats } from "../TranscriptFormats.ts"

export interface TranscribeOptions {
  /** `auto` (default) or an ISO 639-1 code. */
  readonly language?: string | undefined
  /** Per-word times in the segments (`words`). */
  readonly words?: boolean | undefined
  /** Label segments with speakers (`SPEAKER_00`, …). */
  readonly diarize?: boolean | undefined
  /** With `diarize`: at least / at most this many speakers (the server's `min_speakers` / `max_speakers`). */
  readonly minSpeakers?: number | undefined
  readonly maxSpeakers?: number | undefined
  /** Names and terms for the model (Whisper's previous-text prompt; its last 224 tokens). */
  readonly prompt?: string | undefined
  /** `translate`: English text from speech in any language (multilingual model). */
  readonly task?: "transcribe" | "translate" | undefined
  /** Only the opening of the recording, in seconds. */
  readonly maxSeconds?: number | undefined
  /** Called with 0..100 as the pipeline advances. */
  readonly onProgress?: ((percent: number) => void) | undefined
  /** For a buffer: a file name whose extension tells the container (default `audio.bin`). */
  readonly filename?: string | undefined
}

export interface LocalTranscription {
  readonly transcript: Transcript
  readonly durationSeconds: number
  readonly language: string | null
  readonly speechDetected: boolean
  readonly speechRatio: number
}

export class Verbatim extends Context.Service<Verbatim, {
  transcribe(
    input: string | Uint8Array,
    options?: TranscribeOptions
  ): Effect.Effect<LocalTranscription, NoAudioInFile | TranscriptionFailed | DiarizationFailed>
  /** `shape`: subtitle-sized srt/vtt cues, as the result's `max_chars_per_line` etc. (ignored by other formats). */
  render(transcript: Transcript, format: TranscriptFormat, filename?: string, shape?: CaptionShape): Effect.Effect<RenderedTranscript>
  /** Summary, chapters, key points, action items (as `GET /v1/jobs/{id}/insights`); MiniLM loads on first use. */
  insights(transcript: Transcript): Effect.Effect<Insights, NotEnoughSpeech | InsightsUnavailable>
}>()("verbatim/library/Verbatim") {
  /** Needs Transcriber, FileDiarizer (layers/Pipeline.ts), TranscriptFormats and InsightsGenerator. */
  static readonly layer = Layer.effect(
    Verbatim,
    Effect.gen(function*() {
      const transcriber = yield* Transcriber
      const diarizer = yield* FileDiarizer
      const formats = yield* TranscriptFormats
      const generator = yield* InsightsGenerator

      const fromPath = Effect.fnUntraced(function*(file: string, options: TranscribeOptions) {
        const result = yield* transcriber.transcribe(
          {
            path: file,
            language: options.language ?? submitDefaults.language,
            wordTimestamps: options.words ?? submitDefaults.word_timestamps,
            maxSeconds: options.maxSeconds,
            ...(options.prompt === undefined ? {} : { prompt: options.prompt }),
            ...(options.task === undefined ? {} : { task: options.task })
          },
          (progress) => Effect.sync(() => options.onProgress?.(progress))
        )
        const transcript = options.diarize === true && result.speechDetected
          ? assignSpeakers(result.transcript, yield* diarizer.diarizeFile({
            path: file,
            maxSeconds: options.maxSeconds,
            minSpeakers: options.minSpeakers,
            maxSpeakers: options.maxSpeakers
          }))
          : result.transcript
        return {
          transcript,
          durationSeconds: result.durationSeconds,
          language: result.language,
          speechDetected: result.speechDetected,
          speechRatio: result.speechRatio
        } satisfies LocalTranscription
      })

      /**
       * The pipeline's worker thread does not hold the host process open, so a script whose only
       * pending work is a transcription would exit mid-way; a timer keeps it alive meanwhile.
       */
      const keepingAlive = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.acquireUseRelease(
          Effect.sync(() => setInterval(() => undefined, 60_000)),
          () => effect,
          (timer) => Effect.sync(() => clearInterval(timer))
        )

      const transcribe = Effect.fn("Verbatim.transcribe")(function*(input: string | Uint8Array, options: TranscribeOptions = {}) {
        if (typeof input === "string") return yield* keepingAlive(fromPath(path.resolve(input), options))
        const bytes = input
        return yield* keepingAlive(Effect.acquireUseRelease(
          Effect.promise(() => fsp.mkdtemp(path.join(os.tmpdir(), "verbatim-"))),
          (dir) =>
            Effect.gen(function*() {
              const file = path.join(dir, path.basename(options.filename ?? "audio.bin"))
              yield* Effect.promise(() => fsp.writeFile(file, bytes))
              return yield* fromPath(file, options)
            }),
          (dir) => Effect.promise(() => fsp.rm(dir, { recursive: true, force: true }))
        ))
      })

      const render = Effect.fn("Verbatim.render")(function*(
        transcript: Transcript,
        format: TranscriptFormat,
        filename?: string,
        shape?: CaptionShape
      ) {
        return yield* formats.render(transcript, format, filename === undefined ? {} : { filename }, shape)
      })

      const insights = Effect.fn("Verbatim.insights")(function*(transcript: Transcript) {
        return yield* generator.generate(transcript)
      })

      return Verbatim.of({ transcribe, render, insights })
    })
  )
}
