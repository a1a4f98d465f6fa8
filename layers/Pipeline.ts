/**
 * The speech pipeline's composition root, from configuration: decoder backend, models dir
 * and model, ONNX threads. `PipelineLayer` provides `Transcriber` for job runs, running the
 * pipeline in a worker thread started on first use (pipeline/worker/), and `MediaDecoder` on
 * the main thread for the cheap duration probe at submit time. Models load on first use, not
 * at start.
 */
import { Layer } from "effect"
import { MediaDecoder } from "../pipeline/media/MediaDecoder.ts"
import { localPipeline, modelRegistryLayer } from "../pipeline/worker/LocalPipeline.ts"
import { PipelineWorker } from "../pipeline/worker/PipelineWorker.ts"
import type { PipelineOptions } from "../pipeline/worker/PipelineRpc.ts"
import { WorkerDiarizer } from "../pipeline/worker/WorkerDiarizer.ts"
import { WorkerTranscriber } from "../pipeline/worker/WorkerTranscriber.ts"
import { SpeechConfig } from "../services/config/SpeechConfig.ts"

/** The model registry alone (the `models` CLI needs no decoder or sessions). */
export const ModelRegistryLayer = Layer.unwrap(
  SpeechConfig.useSync((config) => modelRegistryLayer({ ...config, reportDownloads: true }))
)

/** The pipeline's settings as the worker receives them. */
export const pipelineOptions = (config: SpeechConfig["Service"]): PipelineOptions => ({
  decoder: config.decoder,
  modelsDir: config.modelsDir,
  modelsUrl: config.modelsUrl,
  model: config.model,
  encoder: config.encoder !== "auto" ? config.encoder : config.model === "whisper-base" ? "q8" : "fp32",
  threads: config.threads,
  beamSize: config.beamSize,
  batchSize: config.batchSize,
  conditionOnPreviousText: config.conditionOnPreviousText,
  idleUnloadMs: 10 * 60_000,
  reportDownloads: true,
  // The API answers first; transcription takes the CPU that is left (bench/api.ts).
  niceness: 10
})

/** Transcription and diarization in the pipeline worker; decoding probes on the main thread. */
export const PipelineLayer = Layer.unwrap(
  SpeechConfig.useSync((config) =>
    Layer.mergeAll(WorkerTranscriber, WorkerDiarizer).pipe(
      Layer.provide(PipelineWorker.layer({ pipeline: pipelineOptions(config) })),
      Layer.merge(MediaDecoder.layer({ backend: config.decoder }))
    )
  )
)

/** The whole pipeline on the calling thread (blocks its event loop while it works). */
export const InProcessPipelineLayer = Layer.unwrap(
  SpeechConfig.useSync((config) => localPipeline(pipelineOptions(config)))
)
