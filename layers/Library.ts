/**
 * Composition root of the embeddable library (`import … from "verbatim"`): the speech
 * pipeline in its worker thread (as the server runs it) and the transcript renderers, from
 * a few settings instead of the environment.
 */
import { Layer } from "effect"
import { PostgresSearchBackend } from "../search/PostgresSearchBackend.ts"
import { SearchIndex } from "../search/SearchIndex.ts"
import { AppConfig, type AppConfigShape } from "../services/AppConfig.ts"
import { LocalLibrary } from "../services/library/LocalLibrary.ts"
import { Verbatim } from "../services/library/Verbatim.ts"
import { LibraryEmbedder } from "../services/search-index/LibraryEmbedder.ts"
import { TranscriptFormats } from "../services/TranscriptFormats.ts"
import { InsightsGeneratorLayer } from "./App.ts"
import { DatabaseLayer } from "./Database.ts"
import { PipelineLayer } from "./Pipeline.ts"

export interface LibraryOptions {
  /** Where model folders live (a missing model is downloaded there on first use). Default `../shared/models`. */
  readonly modelsDir?: string
  /** `whisper-base` (multilingual, default) or `whisper-tiny.en`. */
  readonly model?: "whisper-base" | "whisper-tiny.en"
  /** `auto` (native ffmpeg when on PATH, else WASM), `wasm` or `native`. */
  readonly decoder?: "auto" | "wasm" | "native"
  /** ONNX Runtime threads. Default 2. */
  readonly threads?: number
  /** Where missing models are downloaded from. Default `https://huggingface.co`. */
  readonly modelsUrl?: string
  /** Where the local search library's embedded database lives (`index`/`search`). Default `./verbatim-library`. */
  readonly dataDir?: string
}

const settings = (options: LibraryOptions): Partial<AppConfigShape> => {
  const chosen: { -readonly [K in keyof AppConfigShape]?: AppConfigShape[K] } = {}
  if (options.modelsDir !== undefined) chosen.modelsDir = options.modelsDir
  if (options.model !== undefined) chosen.model = options.model
  if (options.decoder !== undefined) chosen.decoder = options.decoder
  if (options.threads !== undefined) chosen.threads = options.threads
  if (options.modelsUrl !== undefined) chosen.modelsUrl = options.modelsUrl
  return chosen
}

/** `Verbatim` (transcribe, render, insights) on the real pipeline. Models load on first use. */
export const libraryLayer = (options: LibraryOptions = {}) =>
  Verbatim.layer.pipe(
    Layer.provide(Layer.mergeAll(PipelineLayer, TranscriptFormats.layer, InsightsGeneratorLayer)),
    Layer.provide(AppConfig.layerWith(settings(options)))
  )

/**
 * `LocalLibrary` (index and search transcripts) on an embedded PGlite database under
 * `dataDir` (migrated as the server's) with MiniLM from `modelsDir`. A layer of its own so
 * that transcribe-only users never open a database: build it only where search is used.
 * One process owns a data dir at a time (see services/db/EmbeddedPostgres.ts).
 */
export const localLibraryLayer = (options: LibraryOptions = {}) =>
  LocalLibrary.layer.pipe(
    Layer.provide(SearchIndex.layer),
    Layer.provide(Layer.mergeAll(
      PostgresSearchBackend.layer(),
      Layer.unwrap(AppConfig.useSync((config) => LibraryEmbedder.layer({ modelsDir: config.modelsDir, threads: config.threads })))
    )),
    Layer.provide(DatabaseLayer),
    Layer.provide(AppConfig.layerWith({ ...settings(options), dataDir: options.dataDir ?? "./verbatim-library" }))
  )
