/**
 * Composition root of the embeddable library (`import … from "verbatim"`): the speech
 * pipeline in its worker thread (as the server runs it) and the transcript renderers, from
 * a few settings instead of the environment.
 */
import { Layer, Option } from "effect"
import { PostgresSearchBackend } from "../search/PostgresSearchBackend.ts"
import { QueryTranslator } from "../search/QueryTranslator.ts"
import { SearchIndex } from "../search/SearchIndex.ts"
import { DatabaseConfig } from "../services/config/DatabaseConfig.ts"
import { InsightsConfig } from "../services/config/InsightsConfig.ts"
import { SpeechConfig } from "../services/config/SpeechConfig.ts"
import { StorageConfig } from "../services/config/StorageConfig.ts"
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
  /**
   * Apertium's data folder: with its English–Spanish pair there, a question in one language is
   * also searched in the other. Default `/usr/share/apertium` (Debian's); `none` turns it off.
   */
  readonly apertiumDir?: string
}

const speech = (options: LibraryOptions) => {
  const chosen: { -readonly [K in keyof SpeechConfig["Service"]]?: SpeechConfig["Service"][K] } = {}
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
    // No LLM: the library's insights are extractive.
    Layer.provide(Layer.merge(SpeechConfig.layerWith(speech(options)), InsightsConfig.layerWith()))
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
      QueryTranslator.layerFor(options.apertiumDir ?? QueryTranslator.defaultDir),
      Layer.unwrap(SpeechConfig.useSync((config) => LibraryEmbedder.layer({ modelsDir: config.modelsDir, threads: config.threads })))
    )),
    Layer.provide(DatabaseLayer),
    Layer.provide(Layer.mergeAll(
      SpeechConfig.layerWith(speech(options)),
      DatabaseConfig.layerWith({ databaseUrl: Option.none() }),
      StorageConfig.layerWith({ dataDir: options.dataDir ?? "./verbatim-library" })
    ))
  )
