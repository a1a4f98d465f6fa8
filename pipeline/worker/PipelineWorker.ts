/**
 * The supervised pipeline worker, seen from the main thread: `run(op, input, onProgress)` runs one
 * operation of Protocol.ts in a `node:worker_threads` worker (workerMain.ts), so the CPU work
 * of the pipeline (log-mel, VAD glue, the decoding loop, alignment) never blocks the event loop.
 *
 * One long-lived worker, started on the first call (an idle server pays nothing for it) and kept
 * between calls so loaded models are reused. After `idleExitMs` without a call (by default the
 * pipeline's session idle-unload time) the worker is ended, which gives back its sessions and its
 * own heap; the next call starts a new one. Measured (process RSS, one 18 s file): tiny.en 122 MB
 * before, 431 MB after, 345 MB once the worker ended; base 121 → 551 → 389 MB. The rest stays
 * in the C allocator's arenas, as it did when the pipeline ran on the main thread.
 * Supervision: a worker that crashes or exits fails every call in flight with `WorkerLost` and is
 * forgotten; the next call starts a fresh one. A call that ends before its answer (interrupted, or
 * `onProgress` failed) sends `Cancel` and waits for the worker to confirm; a worker that does not
 * confirm within `cancelGraceMs` is retired. Closing the layer's scope retires the worker.
 *
 * Retiring asks the worker to exit (`Exit`, handled between two steps of its work) and terminates
 * it only if it is still there `killAfterMs` later. Never `terminate()` first: terminating while
 * the worker is inside a synchronous onnxruntime `run` aborts the whole process (the binding throws
 * a C++ exception into the torn-down environment: SIGABRT, seen here when it was tried).
 */
import { Context, Effect, Layer, Queue, Schema } from "effect"
import { Worker } from "node:worker_threads"
import {
  type FromWorker,
  type OperationError,
  type OperationInput,
  type OperationName,
  operations,
  type OperationSuccess,
  type PipelineOptions,
  type ProgressFacts,
  type ToWorker,
  type WorkerInput,
  type WorkerTestHooks
} from "./Protocol.ts"

/** The worker died (crash, exit, could not start) while the call ran; a new call gets a new worker. */
export class WorkerLost extends Schema.TaggedError<WorkerLost>()("WorkerLost", {
  reason: Schema.String
}) {}

export interface PipelineWorkerOptions {
  readonly pipeline: PipelineOptions
  /** How long an interrupted call waits for the worker to confirm before terminating it (default 10 s). */
  readonly cancelGraceMs?: number
  /** How long a retired worker has to exit by itself before it is terminated (default 30 s). */
  readonly killAfterMs?: number
  /** Idle time after which the worker is ended (default `pipeline.idleUnloadMs`). */
  readonly idleExitMs?: number
  /** Tests only: faults injected in the worker (Protocol.ts). */
  readonly testHooks?: WorkerTestHooks
}

type Reply = Exclude<FromWorker, { readonly _tag: "Fatal" }> | { readonly _tag: "Lost"; readonly reason: string }

/** One started worker and the calls it owes an answer. */
interface Running {
  readonly worker: Worker
  readonly calls: Map<number, Queue.Queue<Reply>>
  fatal: string | undefined
  gone: boolean
  idleTimer: ReturnType<typeof setTimeout> | undefined
  readonly exited: Promise<void>
}

/** One call in flight; `settled` once the worker's final answer was read. */
interface Call {
  readonly id: number
  readonly queue: Queue.Queue<Reply>
  readonly running: Running
  settled: boolean
}

export class PipelineWorker extends Context.Service<PipelineWorker, {
  run<K extends OperationName>(
    op: K,
    input: OperationInput<K>,
    onProgress: (progress: number, facts: ProgressFacts) => Effect.Effect<void>
  ): Effect.Effect<OperationSuccess<K>, OperationError<K> | WorkerLost>
  /** The running worker's thread id, or null when none runs (started lazily, forgotten when lost). */
  readonly threadId: Effect.Effect<number | null>
}>()("verbatim/pipeline/PipelineWorker") {
  static readonly layer = (options: PipelineWorkerOptions) =>
    Layer.effect(
      PipelineWorker,
      Effect.gen(function*() {
        const cancelGraceMs = options.cancelGraceMs ?? 10_000
        const idleExitMs = options.idleExitMs ?? options.pipeline.idleUnloadMs
        const killAfterMs = options.killAfterMs ?? 30_000
        const workerData: WorkerInput = {
          pipeline: options.pipeline,
          ...(options.testHooks === undefined ? {} : { testHooks: options.testHooks })
        }
        let current: Running | undefined
        let nextId = 0

        const lose = (running: Running, reason: string) => {
          if (running.gone) return
          running.gone = true
          clearTimeout(running.idleTimer)
          if (current === running) current = undefined
          const why = running.fatal ?? reason
          for (const queue of running.calls.values()) Queue.offerUnsafe(queue, { _tag: "Lost", reason: why })
          running.calls.clear()
        }

        /** Fails its calls, asks it to exit, terminates it if it has not after `killAfterMs`. */
        const retire = (running: Running, reason: string): Promise<void> => {
          lose(running, reason)
          running.worker.postMessage({ _tag: "Exit" } satisfies ToWorker)
          const kill = setTimeout(() => void running.worker.terminate(), killAfterMs)
          kill.unref()
          return running.exited.then(() => clearTimeout(kill))
        }

        const spawn = (): Running => {
          const worker = new Worker(new URL("./workerMain.ts", import.meta.url), { workerData })
          const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()))
          const running: Running = { worker, calls: new Map(), fatal: undefined, gone: false, idleTimer: undefined, exited }
          worker.on("message", (message: FromWorker) => {
            if (message._tag === "Fatal") {
              running.fatal = message.message
              return
            }
            const queue = running.calls.get(message.id)
            if (queue !== undefined) Queue.offerUnsafe(queue, message)
          })
          worker.on("error", (error) => lose(running, `the pipeline worker crashed: ${error.message}`))
          worker.on("exit", (code) => lose(running, `the pipeline worker exited (code ${code})`))
          // Only calls in flight keep the process alive, not an idle worker.
          worker.unref()
          return running
        }

        /** Registers a call with the running worker (starting one if needed) and sends it. */
        const open = (op: OperationName, input: unknown) =>
          Effect.gen(function*() {
            const queue = yield* Queue.unbounded<Reply>()
            const id = nextId++
            const running = yield* Effect.try({
              try: () => current ?? (current = spawn()),
              catch: (cause) => new WorkerLost({ reason: `the pipeline worker could not start: ${String(cause)}` })
            })
            clearTimeout(running.idleTimer)
            running.calls.set(id, queue)
            running.worker.ref()
            running.worker.postMessage({ _tag: "Start", id, op, input } satisfies ToWorker)
            return { id, queue, running, settled: false }
          })

        /**
         * Ends a call. One that ended before the worker answered (interrupted, or a defect in
         * `onProgress`) is cancelled in the worker, so no work goes on for a caller that left.
         */

        const close = (
          call: Call
        ) =>
          Effect.gen(function*() {
            const { id, queue, running } = call
            if (!call.settled && running.calls.has(id)) {
              running.worker.postMessage({ _tag: "Cancel", id } satisfies ToWorker)
              const confirmed = yield* Queue.take(queue).pipe(
                Effect.repeat({ until: (reply) => reply._tag !== "Progress" }),
                Effect.timeoutOption(cancelGraceMs)
              )
              if (confirmed._tag === "None") void retire(running, "the pipeline worker did not stop when asked")
            }
            running.calls.delete(id)
            if (running.calls.size === 0 && !running.gone) {
              running.worker.unref()
              running.idleTimer = setTimeout(() => void retire(running, "the pipeline worker was idle"), idleExitMs)
              running.idleTimer.unref()
            }
          })

        const call = (
          op: OperationName,
          input: unknown,
          onProgress: (progress: number, facts: ProgressFacts) => Effect.Effect<void>
        ): Effect.Effect<{ readonly _tag: "Succeeded"; readonly value: unknown }, { readonly error: unknown } | WorkerLost> =>
          Effect.acquireUseRelease(
            open(op, input),
            (opened) => {
              const next: Effect.Effect<{ readonly _tag: "Succeeded"; readonly value: unknown }, { readonly error: unknown } | WorkerLost> =
                Effect.flatMap(Queue.take(opened.queue), (reply) => {
                  if (reply._tag !== "Progress") opened.settled = true
                  switch (reply._tag) {
                    case "Progress":
                      return Effect.andThen(onProgress(reply.progress, reply.facts), next)
                    case "Succeeded":
                      return Effect.succeed(reply)
                    case "Failed":
                      return Effect.fail({ error: reply.error })
                    case "Defect":
                      return Effect.die(new Error(`pipeline worker: ${reply.message}`))
                    case "Cancelled":
                      // Only sent after a Cancel, which only a call that already ended sends.
                      return Effect.interrupt
                    case "Lost":
                      return Effect.fail(new WorkerLost({ reason: reply.reason }))
                  }
                })
              return next
            },
            close
          )

        const run = <K extends OperationName>(
          op: K,
          input: OperationInput<K>,
          onProgress: (progress: number, facts: ProgressFacts) => Effect.Effect<void>
        ): Effect.Effect<OperationSuccess<K>, OperationError<K> | WorkerLost> => {
          const spec = operations[op]
          const failed = (failure: { readonly error: unknown } | WorkerLost): Effect.Effect<never, unknown> =>
            failure instanceof WorkerLost
              ? Effect.fail(failure)
              : Effect.flatMap(Schema.decodeUnknownEffect(spec.error)(failure.error).pipe(Effect.orDie), Effect.fail)
          return Schema.encodeUnknownEffect(spec.input)(input).pipe(
            Effect.orDie,
            Effect.flatMap((encoded) => call(op, encoded, onProgress)),
            Effect.catch(failed),
            Effect.flatMap((answer) => Schema.decodeUnknownEffect(spec.success)(answer.value).pipe(Effect.orDie))
          ) as Effect.Effect<OperationSuccess<K>, OperationError<K> | WorkerLost>
        }

        yield* Effect.addFinalizer(() =>
          Effect.suspend(() => {
            const running = current
            if (running === undefined) return Effect.void
            return Effect.promise(() => retire(running, "the pipeline is shutting down"))
          })
        )

        return PipelineWorker.of({
          run,
          threadId: Effect.sync(() => current?.worker.threadId ?? null)
        })
      })
    )
}
