/**
 * The pipeline worker's side of PipelineRpc.ts: the handlers, and the program a worker thread
 * runs to serve them (`serveWorker`, started by workerMain.ts).
 *
 * The pipeline (LocalPipeline.ts) is built from the initial message on the first call and kept
 * for the worker's life, so loaded models are reused; sessions unload after their idle time, as
 * in-process. Calls may overlap, each in its own fiber, as they would on the main thread; an
 * interrupted call's fiber is interrupted at its next step (an ONNX run in progress is synchronous
 * on this thread and ends first). A pipeline that cannot be built fails every call with
 * `WorkerLost`, and the client retires the worker.
 *
 * The thread ends itself: when the client closes it, the RPC server stops, the pipeline's scope
 * closes and `process.exit` ends this thread. Both happen on this thread's event loop, so never
 * inside an ONNX run (see PipelineWorker.ts for why that matters and where the parent terminates).
 */
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import { Cause, Context, Effect, Exit, Layer, Queue, Stream, SubscriptionRef } from "effect"
import { type Rpc, type RpcGroup, RpcServer, RpcWorker } from "effect/rpc"
import * as os from "node:os"
import { parentPort } from "node:worker_threads"
import { FileDiarizer } from "../diarize/FileDiarizer.ts"
import { type NoAudioInFile, Transcriber, type TranscriptionFailed } from "../Transcriber.ts"
import { localPipeline } from "./LocalPipeline.ts"
import {
  type DiarizeRequest,
  PipelineOptions,
  PipelineRpcs,
  type TranscribeEvent,
  type TranscribeRequest,
  WorkerLost
} from "./PipelineRpc.ts"

/**
 * Lower this thread's scheduling priority before the pipeline starts, so the threads it creates
 * (onnxruntime's intra-op pool, the ffmpeg worker) inherit it: on a busy machine the main thread's
 * HTTP work is served first and the pipeline takes the CPU that is left. On Linux, `setpriority`
 * on "process" 0 applies to the calling thread only. Best effort (refused or unsupported:
 * unchanged). Caveat: libuv's shared thread pool is created by the first thread that needs it;
 * the server's main thread always does (file system at start) long before this worker.
 */
const lowerPriority = (niceness: number) =>
  Effect.sync(() => {
    if (niceness > 0) os.setPriority(niceness)
  }).pipe(Effect.catchDefect(() => Effect.void))

/** The handlers of PipelineRpcs, as one record: a test worker may wrap some of them. */
export const pipelineHandlers = Effect.gen(function*() {
  const options = yield* RpcWorker.initialMessage(PipelineOptions).pipe(Effect.orDie)
  yield* lowerPriority(options.niceness)
  const scope = yield* Effect.scope
  const pipeline = yield* Effect.cached(
    Layer.buildWithScope(localPipeline(options), scope).pipe(
      Effect.catchCause((cause) =>
        Effect.fail(new WorkerLost({ reason: `the pipeline worker could not start: ${String(Cause.squash(cause))}` }))
      )
    )
  )
  /**
   * The calls running, by arrival number. `Settle` only waits on calls that arrived before it:
   * one the client started after asking (another job's call on this worker) must not keep an
   * interrupted call's `Settle` from answering (it timed out, and the worker was retired with
   * that new call in flight).
   */
  const running = yield* SubscriptionRef.make<ReadonlySet<number>>(new Set())
  let arrived = 0
  /** Registers the call while it runs, for `Settle`. */
  const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.suspend(() => {
        const call = arrived++
        return Effect.as(SubscriptionRef.update(running, (calls) => new Set([...calls, call])), call)
      }),
      () => effect,
      (call) => SubscriptionRef.update(running, (calls) => new Set([...calls].filter((other) => other !== call)))
    )

  return {
    Transcribe: (request: typeof TranscribeRequest.Type) =>
      Stream.callback<TranscribeEvent, NoAudioInFile | TranscriptionFailed | WorkerLost>((queue) =>
        counted(Effect.gen(function*() {
          const transcriber = Context.get(yield* pipeline, Transcriber)
          const result = yield* transcriber.transcribe(request, (progress, facts) =>
            Queue.offer(queue, { _tag: "Progress", progress, ...facts }))
          yield* Queue.offer(queue, { _tag: "Done", result })
          yield* Queue.end(queue)
        }))
      ),
    Diarize: (request: typeof DiarizeRequest.Type) =>
      counted(Effect.flatMap(pipeline, (context) => Context.get(context, FileDiarizer).diarizeFile(request))),
    Settle: ({ busy }: { readonly busy: number }) =>
      Effect.suspend(() => {
        const before = arrived
        return SubscriptionRef.changes(running).pipe(
          Stream.takeUntil((calls) => [...calls].filter((call) => call < before).length <= busy),
          Stream.runDrain
        )
      })
  }
})

/**
 * Serves `handlers` on this worker thread until the client closes it, then ends the thread.
 * `handlers` may read the initial message (the protocol is provided to it).
 */
export const serveWorker = <E>(handlers: Layer.Layer<Rpc.ToHandler<RpcGroup.Rpcs<typeof PipelineRpcs>>, E, RpcServer.Protocol>) => {
  // Deno's `node:worker_threads` port has no `close()`, which NodeWorkerRunner calls when the
  // client closes the worker: the close then throws and is logged as an error at every worker end.
  // This thread ends by `process.exit` below anyway, so there a close that does nothing is enough.
  const port = parentPort as { close?: unknown } | null
  if (port !== null && typeof port.close !== "function") port.close = () => {}
  const protocol = RpcServer.layerProtocolWorkerRunner.pipe(Layer.provide(NodeWorkerRunner.layer))
  const program = RpcServer.layer(PipelineRpcs).pipe(Layer.provide(handlers), Layer.provide(protocol), Layer.launch)
  Effect.runFork(program).addObserver((exit) => {
    process.exit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
  })
}
