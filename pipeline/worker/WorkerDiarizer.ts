/**
 * `FileDiarizer` whose work runs in the pipeline worker (PipelineWorker.ts), beside
 * transcription: decoding, voice activity and the voice encoder never block the HTTP event loop.
 * A worker lost mid-call is `DiarizationFailed`, like any other failure of diarization.
 */
import { Effect, Layer } from "effect"
import { DiarizationFailed } from "../diarize/Diarizer.ts"
import { FileDiarizer } from "../diarize/FileDiarizer.ts"
import { PipelineWorker } from "./PipelineWorker.ts"

export const WorkerDiarizer = Layer.effect(
  FileDiarizer,
  Effect.gen(function*() {
    const worker = yield* PipelineWorker
    return FileDiarizer.of({
      diarizeFile: Effect.fn("FileDiarizer.diarizeFile")(function*(request) {
        return yield* worker.diarize(request).pipe(
          Effect.catchTag("WorkerLost", (lost) => Effect.fail(new DiarizationFailed({ reason: lost.reason })))
        )
      })
    })
  })
)
