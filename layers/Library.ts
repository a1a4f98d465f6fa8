/**
 * Composition root of the embeddable library (`import … from "verbatim"`): the speech
 * pipeline in its worker thread (as the server runs it) and the transcript renderers, from
 * a few settings instead of the environment.
 */
import { Layer } from "effect"
import { AppConfig, type AppConfigShape } from "../services/AppConfig.ts"
import { Verbatim } from "../services/library/Verbatim.ts"
import { TranscriptFormats } from "../services/TranscriptFormats.ts"
import { InsightsGeneratorLayer } from "./App.ts"
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
