import { StageClock } from "../StageClock.ts"
import { Context, Duration, Effect, Layer, RcMap, Schema, Scope } from "effect"
import * as ort from "onnxruntime-node"

/**
 * Thin service over onnxruntime-node.
 *
 * Sessions are shared: `session(path, options)` hands out a reference to one
 * InferenceSession per (path, options) pair, held for the caller's Scope. When the
 * last holder's scope closes the session stays loaded for `idleUnloadMs` and is then
 * released, so back-to-back jobs reuse it and an idle server gives the memory back.
 */

export type OrtTensor = ort.Tensor
export const Tensor = ort.Tensor

export class OnnxLoadError extends Schema.TaggedError<OnnxLoadError>()("OnnxLoadError", {
  path: Schema.String,
  message: Schema.String
}) {}

export class OnnxRunError extends Schema.TaggedError<OnnxRunError>()("OnnxRunError", {
  path: Schema.String,
  message: Schema.String
}) {}

export interface SessionOptions {
  /** Intra-op threads for this session; defaults to the layer's `threads`. */
  readonly threads?: number
  /**
   * Keep onnxruntime's CPU memory arena (default true). The arena never shrinks: a graph
   * with a few very large activations (the Whisper encoder's attention maps) is cheaper in
   * memory without it, at no measurable cost for a 0.3 s run.
   */
  readonly memArena?: boolean
}

export interface OnnxSession {
  readonly path: string
  readonly inputNames: ReadonlyArray<string>
  readonly outputNames: ReadonlyArray<string>
  /** Runs the graph. `outputs` restricts which outputs are computed and returned. */
  readonly run: (
    feeds: Readonly<Record<string, ort.Tensor>>,
    outputs?: ReadonlyArray<string>
  ) => Effect.Effect<Record<string, ort.Tensor>, OnnxRunError>
}

export interface OnnxRuntimeOptions {
  /** Default intra-op thread count (2 = one job owns both cores of the reference machine). */
  readonly threads: number
  /** How long an unused session stays loaded after its last holder released it. */
  readonly idleUnloadMs: number
  /**
   * Let intra-op worker threads spin while waiting for work (onnxruntime's default).
   * Off by default: on a 2-core machine shared with other work (VAD, HTTP, other jobs),
   * spinning threads steal the cores they wait for; measured here a q8 decoder step went
   * from ~7 ms to ~17–20 ms with spinning on under load.
   */
  readonly spinning?: boolean
}

const message = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

export class OnnxRuntime extends Context.Service<OnnxRuntime, {
  /** A shared session for `path`, held until the calling scope closes. */
  readonly session: (path: string, options?: SessionOptions) => Effect.Effect<OnnxSession, OnnxLoadError, Scope.Scope>
}>()("verbatim/pipeline/OnnxRuntime") {
  static readonly layer = (options: OnnxRuntimeOptions) =>
    Layer.effect(
      OnnxRuntime,
      Effect.gen(function*() {
        // The key is a string so that RcMap's structural equality is trivial.
        const sessions = yield* RcMap.make({
          lookup: (key: string) => {
            const { path, threads, memArena } = JSON.parse(key) as { path: string; threads: number; memArena: boolean }
            return Effect.acquireRelease(
              Effect.tryPromise({
                try: () => {
                  const started = performance.now()
                  return ort.InferenceSession.create(path, {
                    intraOpNumThreads: threads,
                    interOpNumThreads: 1,
                    executionMode: "sequential",
                    enableCpuMemArena: memArena,
                    graphOptimizationLevel: "all",
                    extra: { session: { intra_op: { allow_spinning: options.spinning === true ? "1" : "0" } } }
                  }).then((session) => {
                    StageClock.add("model load", performance.now() - started)
                    return session
                  })
                },
                catch: (cause) => new OnnxLoadError({ path, message: message(cause) })
              }),
              (session) => Effect.promise(() => session.release())
            ).pipe(Effect.map((session): OnnxSession => wrap(path, session)))
          },
          idleTimeToLive: Duration.millis(options.idleUnloadMs)
        })

        const session = Effect.fn("OnnxRuntime.session")(function*(path: string, sessionOptions?: SessionOptions) {
          const threads = sessionOptions?.threads ?? options.threads
          const memArena = sessionOptions?.memArena ?? true
          return yield* RcMap.get(sessions, JSON.stringify({ path, threads, memArena }))
        })

        return OnnxRuntime.of({ session })
      })
    )
}

const wrap = (path: string, session: ort.InferenceSession): OnnxSession => ({
  path,
  inputNames: session.inputNames,
  outputNames: session.outputNames,
  run: (feeds, outputs) =>
    Effect.tryPromise({
      try: () =>
        outputs === undefined
          ? session.run(feeds as ort.InferenceSession.FeedsType)
          : session.run(feeds as ort.InferenceSession.FeedsType, outputs as Array<string>),
      catch: (cause) => new OnnxRunError({ path, message: message(cause) })
    }) as Effect.Effect<Record<string, ort.Tensor>, OnnxRunError>
})
