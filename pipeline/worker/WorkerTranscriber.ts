/**
 * `Transcriber` whose work runs in the pipeline worker (PipelineWorker.ts): what the server uses,
 * so that transcribing never stalls the HTTP event loop. Same contract as the in-process one; a
 * worker lost mid-call is `TranscriptionFailed` of kind `engine` (not the file's doing).
 */
import { Effect, Layer } from "effect"
import { Transcriber, TranscriptionFailed } from "../Transcriber.ts"
import { PipelineWorker } from "./PipelineWorker.ts"

export const WorkerTranscriber = Layer.effect(
  Transcriber,
  Effect.gen(function*() {
    const worker = yield* PipelineWorker
    return Transcriber.of({
      transcribe: Effect.fn("Transcriber.transcribe")(function*(request, onProgress) {
        return yield* worker.transcribe(request, onProgress).pipe(
          Effect.catchTag("WorkerLost", (lost) => Effect.fail(new TranscriptionFailed({ reason: lost.reason, kind: "engine" })))
        )
      })
    })
  })
)
