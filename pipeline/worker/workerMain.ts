/**
 * Worker-thread entry of the pipeline worker (started by PipelineWorker.ts): serves the pipeline's
 * RPCs (PipelineServer.ts) off the main thread until the main thread closes it.
 */
import { pipelineHandlers, serveWorker } from "./PipelineServer.ts"
import { PipelineRpcs } from "./PipelineRpc.ts"

serveWorker(PipelineRpcs.toLayer(pipelineHandlers))
