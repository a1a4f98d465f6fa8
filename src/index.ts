/**
 * The embeddable Verbatim library: the service's own speech pipeline in-process, without the
 * HTTP server; a local search library (the server's library search on an embedded database
 * under `dataDir`) opens only when first used.
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
import { type LibraryOptions, libraryLayer, localLibraryLayer } from "../layers/Library.ts"
import { type IndexMeta, LocalLibrary, type LocalSearchHit, type LocalSearchOptions } from "../services/library/LocalLibrary.ts"
import { type LocalTranscription, type TranscribeOptions, Verbatim } from "../services/library/Verbatim.ts"
import type { Insights } from "./contract/domain/Insights.ts"
import type { Transcript, TranscriptFormat } from "./contract/domain/Transcript.ts"

export type { LibraryOptions } from "../layers/Library.ts"
export type { LocalTranscription, TranscribeOptions } from "../services/library/Verbatim.ts"
export { Verbatim } from "../services/library/Verbatim.ts"
export type { IndexMeta, LocalSearchHit, LocalSearchOptions } from "../services/library/LocalLibrary.ts"
export { LocalLibrary } from "../services/library/LocalLibrary.ts"
export { InvalidSearchQuery } from "../search/SearchIndex.ts"
export type { RenderedTranscript } from "../services/TranscriptFormats.ts"
export { NoAudioInFile, TranscriptionFailed } from "../pipeline/Transcriber.ts"
export { DiarizationFailed } from "../pipeline/diarize/Diarizer.ts"
export { Segment, Transcript, TranscriptFormat, Word } from "./contract/domain/Transcript.ts"
export { Insights } from "./contract/domain/Insights.ts"
export { InsightsUnavailable, NotEnoughSpeech } from "../services/insights/InsightsErrors.ts"

/** The `Verbatim` service's layer (Effect API). */
export const layer = libraryLayer

/** The `LocalLibrary` service's layer (Effect API): opens the database under `dataDir` when built. */
export const localLibrary = localLibraryLayer

export interface VerbatimClient {
  /** A file path or the bytes of a recording (any container ffmpeg reads). */
  transcribe(input: string | Uint8Array, options?: TranscribeOptions): Promise<LocalTranscription>
  /** txt, srt, vtt and json as text; docx as bytes. */
  render(transcript: Transcript, format: Exclude<TranscriptFormat, "docx">): Promise<string>
  render(transcript: Transcript, format: "docx"): Promise<Uint8Array>
  /** Summary, chapters, key points and action items of a transcript (3 words at least). */
  insights(transcript: Transcript): Promise<Insights>
  /**
   * Indexes a transcript for `search` under an id of your choosing (again: replaces it).
   * Returns how many passages were stored. The first call opens the database under `dataDir`.
   */
  index(id: string, transcript: Transcript, meta?: IndexMeta): Promise<number>
  /** Removes a transcript from the search library. */
  remove(id: string): Promise<void>
  /** Answers a question with the best moments of the indexed transcripts; `job_id` is your id. */
  search(q: string, options?: LocalSearchOptions): Promise<ReadonlyArray<LocalSearchHit>>
  /** Stops the pipeline's worker thread, frees the models and closes the search database. */
  close(): Promise<void>
}

/** The library with Promises. One pipeline per client; `close()` it when done. */
export const createVerbatim = (options: LibraryOptions = {}): VerbatimClient => {
  const runtime = ManagedRuntime.make(libraryLayer(options))
  // Built on its first use only: transcription alone never opens the database.
  const searchRuntime = ManagedRuntime.make(localLibraryLayer(options))
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
    index: (id, transcript, meta) => searchRuntime.runPromise(Effect.flatMap(LocalLibrary, (l) => l.index(id, transcript, meta))),
    remove: (id) => searchRuntime.runPromise(Effect.flatMap(LocalLibrary, (l) => l.remove(id))),
    search: (q, searchOptions) => searchRuntime.runPromise(Effect.flatMap(LocalLibrary, (l) => l.search(q, searchOptions))),
    // The worker thread's exit is awaited with a timer holding the process open (see Verbatim.transcribe).
    close: () => {
      const keepAlive = setInterval(() => undefined, 60_000)
      return Promise.all([runtime.dispose(), searchRuntime.dispose()]).then(() => undefined).finally(() => clearInterval(keepAlive))
    }
  }
}
