/**
 * The supervised pipeline worker, seen from the main thread: the pipeline's RPCs
 * (PipelineRpc.ts) served by a `node:worker_threads` worker (workerMain.ts) through Effect's RPC
 * over workers, so the CPU work of the pipeline (log-mel, VAD glue, the decoding loop, alignment)
 * never blocks the event loop.
 *
 * One long-lived worker, started on the first call (an idle server pays nothing for it) and kept
 * between calls so loaded models are reused. After `idleExitMs` without a call (by default the
 * pipeline's session idle-unload time) the worker is ended, which gives back its sessions and its
 * own heap; the next call starts a new one. Measured (process RSS, one 18 s file): tiny.en 122 MB
 * before, 431 MB after, 345 MB once the worker ended; base 121 → 551 → 389 MB. The rest stays
 * in the C allocator's arenas, as it did when the pipeline ran on the main thread.
 * Supervision: a worker that crashes or exits fails every call in flight with `WorkerLost` and is
 * forgotten; the next call starts a fresh one. Closing the layer's scope retires the worker.
 *
 * The rule: a worker thread is never terminated inside an ONNX run. Terminating a worker while
 * it is inside a synchronous onnxruntime `run` aborts the whole process (the binding throws a C++
 * exception into the torn-down environment: SIGABRT, seen here when it was tried). It holds here:
 * - A call that ends before its answer (interrupted, or `onProgress` failed) interrupts its RPC;
 *   the worker lets the ONNX run in progress finish (it holds the worker's thread) and drops the
 *   answer. The call then waits for `Settle`, which the worker answers only between two steps of
 *   its work, once that call has ended there; a worker that does not answer within
 *   `cancelGraceMs` is retired.
 * - The worker is only ever ended through `retire`, which first waits for `Settle` (all its calls
 *   ended, up to `retireGraceMs`, 30 s) and then closes the RPC client's scope: the worker is asked
 *   to close, and ends itself on its own event loop (PipelineServer.ts), never inside a run.
 *   Effect's Node worker platform terminates it only if it has not ended 5 s after that request:
 *   a thread that answered nothing for `retireGraceMs` + 5 s, i.e. a hung one (one ONNX run takes
 *   seconds).
 */
import { NodeWorker } from "@effect/platform-node"
import { Cause, Context, Deferred, Effect, Exit, Layer, Scope, Semaphore, Stream } from "effect"
import { RpcClient, RpcClientError, RpcWorker } from "effect/rpc"
import { Worker } from "node:worker_threads"
import type { DiarizationFailed, SpeakerTurn } from "../diarize/Diarizer.ts"
import type { DiarizeFileRequest } from "../diarize/FileDiarizer.ts"
import type {
  NoAudioInFile,
  ProgressReport,
  TranscribeRequest,
  TranscriptionFailed,
  TranscriptionResult
} from "../Transcriber.ts"
import { PipelineOptions, PipelineRpcs, WorkerLost } from "./PipelineRpc.ts"

export { WorkerLost }

export interface PipelineWorkerOptions {
  readonly pipeline: PipelineOptions
  /** How long an interrupted call waits for the worker to settle before retiring it (default 10 s). */
  readonly cancelGraceMs?: number
  /**
   * How long a retiring worker gets to settle before it is asked to close (default 30 s): past
   * this and Effect's 5 s, a thread still inside an ONNX run would be terminated, which aborts
   * the process. One run (a batch of windows through the encoder, one decoder step) takes
   * seconds here (whisper-base, 4 windows, 1 thread: ~4.5 s), so 35 s is a hung thread.
   */
  readonly retireGraceMs?: number
  /** Idle time after which the worker is ended (default `pipeline.idleUnloadMs`). */
  readonly idleExitMs?: number
  /** The worker's entry module (default workerMain.ts); a test may give one that wraps its handlers. */
  readonly entry?: URL
}

type Client = RpcClient.FromGroup<typeof PipelineRpcs, RpcClientError.RpcClientError>

/** One started worker: its RPC client, and the scope whose closing ends it. */
interface Slot {
  readonly scope: Scope.Closeable
  readonly client: Client
  /** Set when Effect's worker pool spawns it. */
  thread: Worker | undefined
  /** Fails with the reason once the worker is gone or retiring: calls in flight end with it. */
  readonly gone: Deferred.Deferred<never, WorkerLost>
  /** Calls in flight that have not ended. */
  live: number
  idleTimer: ReturnType<typeof setTimeout> | undefined
}

export class PipelineWorker extends Context.Service<PipelineWorker, {
  transcribe(
    request: TranscribeRequest,
    onProgress: ProgressReport
  ): Effect.Effect<TranscriptionResult, NoAudioInFile | TranscriptionFailed | WorkerLost>
  diarize(request: DiarizeFileRequest): Effect.Effect<Array<SpeakerTurn>, DiarizationFailed | WorkerLost>
  /** The running worker's thread id, or null when none runs (started lazily, forgotten when lost). */
  readonly threadId: Effect.Effect<number | null>
}>()("verbatim/pipeline/PipelineWorker") {
  static readonly layer = (options: PipelineWorkerOptions) =>
    Layer.effect(
      PipelineWorker,
      Effect.gen(function*() {
        const cancelGraceMs = options.cancelGraceMs ?? 10_000
        const retireGraceMs = options.retireGraceMs ?? 30_000
        const idleExitMs = options.idleExitMs ?? options.pipeline.idleUnloadMs
        const entry = options.entry ?? new URL("./workerMain.ts", import.meta.url)
        const starting = yield* Semaphore.make(1)
        let current: Slot | undefined

        /** Fails the slot's calls with `reason` and forgets it; true the first time only. */
        const lose = (slot: Slot, reason: string) => {
          if (!Deferred.doneUnsafe(slot.gone, Exit.fail(new WorkerLost({ reason })))) return false
          clearTimeout(slot.idleTimer)
          if (current === slot) current = undefined
          return true
        }

        /**
         * Ends a worker without ever terminating it inside an ONNX run (see the module comment):
         * waits for it to settle, then asks it to close; Effect's worker platform terminates it
         * only if it is still there 5 s later.
         */
        const shut = (slot: Slot) =>
          slot.client.Settle({ busy: 0 }).pipe(
            Effect.timeoutOption(retireGraceMs),
            Effect.ignore,
            Effect.andThen(Scope.close(slot.scope, Exit.void))
          )
        const retire = (slot: Slot, reason: string) => Effect.suspend(() => lose(slot, reason) ? shut(slot) : Effect.void)
        /** `retire` that forgets the worker at once and ends it in the background. */
        const retireLater = (slot: Slot, reason: string) =>
          Effect.suspend(() => lose(slot, reason) ? Effect.asVoid(Effect.forkDetach(shut(slot))) : Effect.void)

        const spawn = Effect.gen(function*() {
          const scope = yield* Scope.make()
          const gone = Deferred.makeUnsafe<never, WorkerLost>()
          let slot: Slot | undefined
          let thread: Worker | undefined
          const protocol = RpcClient.layerProtocolWorker({ size: 1, concurrency: Number.MAX_SAFE_INTEGER }).pipe(
            Layer.provide(NodeWorker.layer(() => {
              const started = new Worker(entry)
              thread = started
              if (slot !== undefined) slot.thread = started
              // Registered before the platform's own listeners: the reason is known when calls fail.
              // A dead thread has no run to protect: its client is closed at once.
              const died = (reason: string) => {
                if (slot !== undefined && lose(slot, reason)) Effect.runFork(Scope.close(scope, Exit.void))
              }
              started.on("error", (error) => died(`the pipeline worker crashed: ${error.message}`))
              started.on("exit", (code) => died(`the pipeline worker exited (code ${code})`))
              // Only calls in flight keep the process alive, not an idle worker.
              if (slot === undefined || slot.live === 0) started.unref()
              return started
            })),
            Layer.provide(RpcWorker.layerInitialMessage(PipelineOptions, Effect.succeed(options.pipeline)))
          )
          const client = yield* Layer.buildWithScope(protocol, scope).pipe(
            Effect.flatMap((context) => RpcClient.make(PipelineRpcs).pipe(Effect.provideContext(context))),
            Scope.provide(scope),
            Effect.catchCause((cause) =>
              Effect.andThen(
                Scope.close(scope, Exit.void),
                Effect.fail(new WorkerLost({ reason: `the pipeline worker could not start: ${String(cause)}` }))
              )
            )
          )
          slot = { scope, client, thread, gone, live: 0, idleTimer: undefined }
          return slot
        })

        const acquire = starting.withPermit(Effect.gen(function*() {
          const slot = current ?? (current = yield* spawn)
          clearTimeout(slot.idleTimer)
          slot.live++
          slot.thread?.ref()
          return slot
        }))

        /**
         * Ends a call. One that ended before the worker answered waits for the worker to settle,
         * so no work goes on for a caller that left; a worker that does not is retired.
         */
        const release = (slot: Slot, answered: boolean) =>
          Effect.gen(function*() {
            slot.live--
            if (!answered && current === slot) {
              const settled = yield* slot.client.Settle({ busy: slot.live }).pipe(
                Effect.timeoutOption(cancelGraceMs),
                Effect.catch(() => Effect.succeedNone)
              )
              if (settled._tag === "None") {
                yield* retireLater(slot, "the pipeline worker did not stop when asked")
              }
            }
            if (slot.live === 0 && current === slot) {
              slot.thread?.unref()
              slot.idleTimer = setTimeout(() => Effect.runFork(retire(slot, "the pipeline worker was idle")), idleExitMs)
              slot.idleTimer.unref()
            }
          })

        /** Runs `call` on the worker; a lost worker is `WorkerLost` with the reason it was lost. */
        const use = <A, E>(call: (client: Client) => Effect.Effect<A, E | WorkerLost | RpcClientError.RpcClientError>) =>
          Effect.suspend(() => {
            let answered = false
            return Effect.acquireUseRelease(acquire, (slot) => call(slot.client).pipe(
              // Answered: a result or the operation's typed error came back. Otherwise (interrupted,
              // a defect on either side) the worker may still be at it: the release waits for it.
              Effect.onExit((exit) =>
                Effect.sync(() => {
                  answered = Exit.isSuccess(exit) || Cause.hasFails(exit.cause)
                })
              ),
              Effect.catch((error) => {
                if (!(error instanceof RpcClientError.RpcClientError)) return Effect.fail(error)
                return Effect.andThen(
                  retireLater(slot, `the pipeline worker was lost: ${error.message}`),
                  Deferred.await(slot.gone)
                )
              }),
              Effect.tapError((error) =>
                error instanceof WorkerLost ? retireLater(slot, error.reason) : Effect.void
              ),
              (running) => Effect.raceFirst(running, Deferred.await(slot.gone))
            ), (slot) => Effect.suspend(() => release(slot, answered)))
          })

        yield* Effect.addFinalizer(() =>
          Effect.suspend(() => current === undefined ? Effect.void : retire(current, "the pipeline is shutting down"))
        )

        return PipelineWorker.of({
          transcribe: Effect.fn("PipelineWorker.transcribe")(function*(request, onProgress) {
            let result: TranscriptionResult | undefined
            yield* use((client) =>
              client.Transcribe(request).pipe(
                Stream.runForEach((event) => {
                  if (event._tag === "Done") return Effect.sync(() => void (result = event.result))
                  return onProgress(event.progress, event.durationSeconds === undefined ? {} : { durationSeconds: event.durationSeconds })
                })
              )
            )
            if (result === undefined) return yield* Effect.die(new Error("pipeline worker: the transcription ended without a result"))
            return result
          }),
          diarize: Effect.fn("PipelineWorker.diarize")(function*(request) {
            const turns = yield* use((client) => client.Diarize(request))
            return turns.map((turn) => ({ ...turn }))
          }),
          threadId: Effect.sync(() => current?.thread?.threadId ?? null)
        })
      })
    )
}
