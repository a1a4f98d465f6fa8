/**
 * The speech pipeline built in the current thread from plain options: `Transcriber` and
 * `FileDiarizer` on the real parts plus `MediaDecoder`. The pipeline worker builds exactly this inside itself; the CLI may use
 * it directly. Models load on first use, not when the layer is built.
 */
import { Layer } from "effect"
import * as path from "node:path"
import { Diarizer } from "../diarize/Diarizer.ts"
import { FileDiarizer } from "../diarize/FileDiarizer.ts"
import { MediaDecoder } from "../media/MediaDecoder.ts"
import { type DownloadProgress, ModelRegistry } from "../models/ModelRegistry.ts"
import { OnnxRuntime } from "../onnx/OnnxRuntime.ts"
import { TranscriberLive } from "../TranscriberLive.ts"
import { VoiceActivity } from "../vad/VoiceActivity.ts"
import { Whisper } from "../whisper/Whisper.ts"
import type { PipelineOptions } from "./PipelineRpc.ts"

/** Download progress on stderr, one line per file as it completes a tenth. */
export const reportDownload = (progress: DownloadProgress) => {
  const percent = Math.floor((100 * progress.receivedBytes) / Math.max(1, progress.totalBytes))
  process.stderr.write(`\rdownloading ${progress.model}/${progress.file} ${percent}%${percent >= 100 ? "\n" : ""}`)
}

export const modelRegistryLayer = (options: Pick<PipelineOptions, "modelsDir" | "modelsUrl" | "reportDownloads">) =>
  ModelRegistry.layer({
    modelsDir: path.resolve(options.modelsDir),
    baseUrl: options.modelsUrl,
    ...(options.reportDownloads ? { onProgress: reportDownload } : {})
  })

export const localPipeline = (options: PipelineOptions) => {
  const onnx = OnnxRuntime.layer({ threads: options.threads, idleUnloadMs: options.idleUnloadMs })
  const whisper = Whisper.layer({ defaultModel: options.model }).pipe(
    Layer.provide(onnx),
    Layer.provide(modelRegistryLayer(options))
  )
  // The voice encoder loads on the first diarization (from `modelsDir/voice-encoder`).
  const diarizer = Diarizer.layer({ modelsDir: path.resolve(options.modelsDir) }).pipe(Layer.provide(onnx))
  return Layer.mergeAll(
    TranscriberLive({
      model: options.model,
      encoder: options.encoder,
      ...(options.beamSize === undefined ? {} : { beamSize: options.beamSize }),
      ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
      ...(options.conditionOnPreviousText === undefined ? {} : { conditionOnPreviousText: options.conditionOnPreviousText })
    }).pipe(Layer.provide(whisper)),
    FileDiarizer.layer.pipe(Layer.provide(diarizer))
  ).pipe(
    // Beyond 2 threads Silero's small batches gain nothing (measured up to 2 on 2 cores).
    Layer.provide(VoiceActivity.layer({ threads: Math.min(2, options.threads) })),
    Layer.provideMerge(MediaDecoder.layer({ backend: options.decoder }))
  )
}
