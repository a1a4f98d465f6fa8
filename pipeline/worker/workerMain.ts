/**
 * Worker-thread entry that runs the speech pipeline off the main thread (see WorkerTranscriber.ts).
 *
 * Builds the same layers the process would build in-process (LocalPipeline.ts) from `workerData`,
 * once, and then serves calls until it is terminated: each `Start` runs as its own fiber (calls may
 * overlap, as they would on the main thread), each `Cancel` interrupts that fiber. Sessions stay
 * loaded between calls and unload after their idle time, as in-process.
 */
import { Cause, Context, Effect, Exit, Fiber, Layer, Schema, Scope } from "effect"
import * as os from "node:os"
import { parentPort, workerData } from "node:worker_threads"
import { Transcriber } from "../Transcriber.ts"
import { FileDiarizer } from "../diarize/FileDiarizer.ts"
import { localPipeline } from "./LocalPipeline.ts"
import {
  type FromWorker,
  type OperationName,
  operations,
  type ProgressFacts,
  type ToWorker,
  type WorkerInput
} from "./Protocol.ts"

const input = workerData as WorkerInput
const port = parentPort!
const post = (message: FromWorker) => port.postMessage(message)

type Report = (progress: number, facts: ProgressFacts) => Effect.Effect<void>

/** One handler per operation, on the decoded input; answers are encoded by the caller. */
const handlers = (context: Context.Context<Transcriber | FileDiarizer>): {
  readonly [K in OperationName]: (input: unknown, report: Report) => Effect.Effect<unknown, unknown>
} => ({
  Transcribe: (request, report) =>
    Effect.flatMap(
      Schema.decodeUnknownEffect(operations.Transcribe.input)(request).pipe(Effect.orDie),
      (decoded) => Context.get(context, Transcriber).transcribe(decoded, report)
    ),
  Diarize: (request) =>
    Effect.flatMap(
      Schema.decodeUnknownEffect(operations.Diarize.input)(request).pipe(Effect.orDie),
      (decoded) => Context.get(context, FileDiarizer).diarizeFile(decoded)
    )
})

/** The injected crash of a test hook, on the call's first progress report. */
const crashHook = (op: OperationName, request: unknown): (() => void) | undefined => {
  const crash = input.testHooks?.crash
  if (crash === undefined || op !== "Transcribe" || (request as { path?: unknown }).path !== crash.path) return undefined
  return () => {
    if (crash.mode === "exit") process.exit(70)
    if (crash.mode === "hang") Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
    setImmediate(() => {
      throw new Error("injected pipeline worker crash")
    })
  }
}

const serve = (context: Context.Context<Transcriber | FileDiarizer>) => {
  const run = handlers(context)
  const running = new Map<number, Fiber.Fiber<unknown, unknown>>()

  const start = (id: number, op: OperationName, request: unknown) => {
    const spec = operations[op]
    const crash = crashHook(op, request)
    const report: Report = (progress, facts) =>
      Effect.sync(() => {
        post({ _tag: "Progress", id, progress, facts })
        crash?.()
      })
    const fiber = Effect.runFork(run[op](request, report))
    running.set(id, fiber)
    fiber.addObserver((exit) => {
      running.delete(id)
      post(answer(id, spec.success, spec.error, exit))
    })
  }

  port.on("message", (message: ToWorker) => {
    switch (message._tag) {
      case "Start":
        return start(message.id, message.op, message.input)
      case "Cancel": {
        const fiber = running.get(message.id)
        // Already finished: its answer is on its way and ends the call.
        if (fiber !== undefined) Effect.runFork(Fiber.interrupt(fiber))
        return
      }
      case "Exit":
        return process.exit(0)
    }
  })
}

const answer = (
  id: number,
  success: Schema.Codec<unknown, unknown>,
  error: Schema.Codec<unknown, unknown>,
  exit: Exit.Exit<unknown, unknown>
): FromWorker => {
  if (Exit.isSuccess(exit)) return encoded(id, () => ({ _tag: "Succeeded", id, value: Schema.encodeSync(success)(exit.value) }))
  if (Cause.hasInterruptsOnly(exit.cause)) return { _tag: "Cancelled", id }
  const failure = Cause.findErrorOption(exit.cause)
  if (failure._tag === "Some") return encoded(id, () => ({ _tag: "Failed", id, error: Schema.encodeSync(error)(failure.value) }))
  return { _tag: "Defect", id, message: Cause.pretty(exit.cause) }
}

/** An answer that cannot be encoded is a defect of this worker, reported as such. */
const encoded = (id: number, make: () => FromWorker): FromWorker => {
  try {
    return make()
  } catch (cause) {
    return { _tag: "Defect", id, message: `answer could not be encoded: ${String(cause)}` }
  }
}

/**
 * Lower this thread's scheduling priority before anything else starts, so the threads it creates
 * (onnxruntime's intra-op pool, the ffmpeg worker) inherit it: on a busy machine the main thread's
 * HTTP work is served first and the pipeline takes the CPU that is left. On Linux, `setpriority` on
 * "process" 0 applies to the calling thread only. Best effort (refused or unsupported: unchanged).
 * Caveat: libuv's shared thread pool is created by the first thread that needs it; the server's
 * main thread always does (file system at start) long before this lazily started worker.
 */
if (input.pipeline.niceness > 0) {
  try {
    os.setPriority(input.pipeline.niceness)
  } catch {
    // Not permitted or not supported here: run at the inherited priority.
  }
}

const scope = Effect.runSync(Scope.make())
Effect.runPromise(Layer.buildWithScope(localPipeline(input.pipeline), scope)).then(serve, (cause: unknown) => {
  post({ _tag: "Fatal", message: `the speech pipeline could not start: ${String(cause)}` })
  process.exit(1)
})
