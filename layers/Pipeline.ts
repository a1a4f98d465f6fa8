/**
 * The speech pipeline's composition root, from configuration: decoder backend, models dir
 * and model, ONNX threads. Provides `Transcriber` for job runs and `MediaDecoder` for the
 * cheap duration probe at submit time. Models load on first use, not at start.
 */
import { Layer } from "effect"
import * as path from "node:path"
import { MediaDecoder } from "../pipeline/media/MediaDecoder.ts"
import { ModelRegistry } from "../pipeline/models/ModelRegistry.ts"
import { OnnxRuntime } from "../pipeline/onnx/OnnxRuntime.ts"
import { TranscriberLive } from "../pipeline/TranscriberLive.ts"
import { VoiceActivity } from "../pipeline/vad/VoiceActivity.ts"
import { Whisper } from "../pipeline/whisper/Whisper.ts"
import { AppConfig } from "../services/AppConfig.ts"

/** The model registry alone (the `models` CLI needs no decoder or sessions). */
export const ModelRegistryLayer = Layer.unwrap(
  AppConfig.useSync((config) =>
    ModelRegistry.layer({ modelsDir: path.resolve(config.modelsDir), baseUrl: config.modelsUrl, onProgress: reportDownload })
  )
)

/** Download progress on stderr, one line per file as it completes a tenth. */
const reportDownload = (progress: { readonly model: string; readonly file: string; readonly receivedBytes: number; readonly totalBytes: number }) => {
  const percent = Math.floor((100 * progress.receivedBytes) / Math.max(1, progress.totalBytes))
  process.stderr.write(`\rdownloading ${progress.model}/${progress.file} ${percent}%${percent >= 100 ? "\n" : ""}`)
}

export const PipelineLayer = Layer.unwrap(
  AppConfig.useSync((config) => {
    const decoder = MediaDecoder.layer({ backend: config.decoder })
    const whisper = Whisper.layer({ defaultModel: config.model }).pipe(
      Layer.provide(OnnxRuntime.layer({ threads: config.threads, idleUnloadMs: 10 * 60_000 })),
      Layer.provide(ModelRegistryLayer)
    )
    const encoder = config.encoder !== "auto" ? config.encoder : config.model === "whisper-base" ? "q8" : "fp32"
    return TranscriberLive({ model: config.model, encoder }).pipe(
      Layer.provide([whisper, VoiceActivity.layer()]),
      Layer.provideMerge(decoder)
    )
  })
)
