/**
 * A pipeline worker entry for tests (given as `entry` to `PipelineWorker.layer`): the production
 * handlers, with faults injected on a transcription of a file named `crash-<mode>.<ext>`.
 * `exit` and `throw` act right after that call's first progress report was sent (so the caller
 * sees it first): `exit` ends the worker by `process.exit(70)`, `throw` by an uncaught exception.
 * `hang` models a thread that stopped answering: once that call has reported progress, the next
 * `Settle` (the client asking whether an interrupted call has ended) blocks the worker's thread for
 * good, so it hears nothing after (not even the request to close).
 */
import { Effect, Stream } from "effect"
import * as path from "node:path"
import { pipelineHandlers, serveWorker } from "../../pipeline/worker/PipelineServer.ts"
import { PipelineRpcs } from "../../pipeline/worker/PipelineRpc.ts"

const block = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)

const crash = (mode: string) => {
  if (mode === "exit") process.exit(70)
  setImmediate(() => {
    throw new Error("injected pipeline worker crash")
  })
}

let hung = false

serveWorker(PipelineRpcs.toLayer(Effect.map(pipelineHandlers, (handlers) => ({
  ...handlers,
  Transcribe: (request: Parameters<typeof handlers.Transcribe>[0]) => {
    const mode = /^crash-(exit|throw|hang)\./.exec(path.basename(request.path))?.[1]
    const events = handlers.Transcribe(request)
    if (mode === undefined) return events
    if (mode === "hang") return events.pipe(Stream.tap(() => Effect.sync(() => void (hung = true))))
    return events.pipe(Stream.flatMap((event) =>
      // After the event: the crash runs when the next one is pulled, once the report was sent.
      Stream.concat(Stream.succeed(event), Stream.drain(Stream.fromEffect(Effect.sync(() => crash(mode)))))
    ))
  },
  Settle: (request: Parameters<typeof handlers.Settle>[0]) => hung ? Effect.sync(block) : handlers.Settle(request)
}))))
