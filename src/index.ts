/**
 * The embeddable Verbatim library: the service's own speech pipeline in-process, without the
 * HTTP server or a database.
 *
 * Effect users provide `layer(options)` and use the `Verbatim` service; everyone else calls
 * `createVerbatim(options)` and gets Promises. Examples: `examples/*.ts`.
 *
 * ```ts
 * import { createVerbatim } from "verbatim"
 * const verbatim = createVerbatim({ model: "whisper-tiny.en" })
 * const { transcript } = await verbatim.transcribe("meeting.wav", { onProgress: (p) => console.log(p) })
 * console.log(await verbatim.render(transcript, "srt"))
 * await verbatim.close()
 * ```
 */
import { Effect, ManagedRuntime } from "effect"
import { type LibraryOptions, libraryLayer } from "../layers/Library.ts"
import { type LocalTranscription, type TranscribeOptions, Verbatim } from "../services/library/Verbatim.ts"
import type { Insights } from "./contract/domain/Insights.ts"
import type { Transcript, TranscriptFormat } from "./contract/domain/Transcript.ts"

export type { LibraryOptions } from "../layers/Library.ts"
export type { LocalTranscription, TranscribeOptions } from "../services/library/Verbatim.ts"
export { Verbatim } from "../services/library/Verbatim.ts"
export type { RenderedTranscript } from "../services/TranscriptFormats.ts"
export { NoAudioInFile, TranscriptionFailed } from "../pipeline/Transcriber.ts"
export { DiarizationFailed } from "../pipeline/diarize/Diarizer.ts"
export { Segment, Transcript, TranscriptFormat, Word } from "./contract/domain/Transcript.ts"
export { Insights } from "./contract/domain/Insights.ts"
export { InsightsUnavailable, NotEnoughSpeech } from "../services/insights/InsightsErrors.ts"

/** The `Verbatim` service's layer (Effect API). */
export const layer = libraryLayer

export interface VerbatimClient {
  /** A file path or the bytes of a recording (any container ffmpeg reads). */
  transcribe(input: string | Uint8Array, options?: TranscribeOptions): Promise<LocalTranscription>
  /** txt, srt, vtt and json as text; docx as bytes. */
  render(transcript: Transcript, format: Exclude<TranscriptFormat, "docx">): Promise<string>
  render(transcript: Transcript, format: "docx"): Promise<Uint8Array>
  /** Summary, chapters, key points and action items of a transcript (30 words at least). */
  insights(transcript: Transcript): Promise<Insights>
  /** Stops the pipeline's worker thread and frees the models. */
  close(): Promise<void>
}

/** The library with Promises. One pipeline per client; `close()` it when done. */
export const createVerbatim = (options: LibraryOptions = {}): VerbatimClient => {
  const runtime = ManagedRuntime.make(libraryLayer(options))
  const render = (transcript: Transcript, format: TranscriptFormat) =>
    runtime.runPromise(
      Effect.map(Effect.flatMap(Verbatim, (v) => v.render(transcript, format)), (rendered) =>
        format === "docx" ? rendered.body : new TextDecoder().decode(rendered.body))
    )
  return {
    transcribe: (input, transcribeOptions) =>
      runtime.runPromise(Effect.flatMap(Verbatim, (v) => v.transcribe(input, transcribeOptions))),
    render: render as VerbatimClient["render"],
    insights: (transcript) => runtime.runPromise(Effect.flatMap(Verbatim, (v) => v.insights(transcript))),
    // The worker thread's exit is awaited with a timer holding the process open (see Verbatim.transcribe).
    close: () => {
      const keepAlive = setInterval(() => undefined, 60_000)
      return runtime.dispose().finally(() => clearInterval(keepAlive))
    }
  }
}
