/**
 * A pipeline worker entry for tests (given as `entry` to `PipelineWorker.layer`): the production
 * handlers, with faults injected on a transcription of a file named `crash-<mode>.<ext>`, shortly
 * after that call's first progress report (so the report reaches the caller first): `exit` ends
 * the worker by `process.exit(70)`, `throw` by an uncaught exception, `hang` blocks the worker's
 * thread for good (it no longer hears anything).
 */
import { Effect, Stream } from "effect"
import * as path from "node:path"
import { pipelineHandlers, serveWorker } from "../../pipeline/worker/PipelineServer.ts"
import { PipelineRpcs } from "../../pipeline/worker/PipelineRpc.ts"

const crash = (mode: string) => {
  if (mode === "exit") process.exit(70)
  if (mode === "hang") Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
  setImmediate(() => {
    throw new Error("injected pipeline worker crash")
  })
}

serveWorker(PipelineRpcs.toLayer(Effect.map(pipelineHandlers, (handlers) => ({
  ...handlers,
  Transcribe: (request: Parameters<typeof handlers.Transcribe>[0]) => {
    const mode = /^crash-(exit|throw|hang)\./.exec(path.basename(request.path))?.[1]
    const events = handlers.Transcribe(request)
    return mode === undefined
      ? events
      : events.pipe(Stream.tap((event) =>
        event._tag === "Progress" ? Effect.sync(() => void setTimeout(() => crash(mode), 100)) : Effect.void
      ))
  }
}))))
