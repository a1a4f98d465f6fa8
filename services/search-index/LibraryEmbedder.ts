/**
 * The search `Embedder` of a server process, built on first use rather than at start: MiniLM
 * (`modelsDir/minilm-l6-v2`) loads when the first job is indexed or the first question asked,
 * so a server whose models folder lacks it still starts and serves everything else. A build
 * that fails (model missing or broken) is a defect of that call — an index task attempt fails
 * and is retried by the engine, a search answers 500 — and is tried again on the next call.
 */
import { Context, Effect, Exit, Layer, Scope, Semaphore } from "effect"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import { Embedder, type EmbedderOptions } from "../../search/Embedder.ts"

export const LibraryEmbedder = {
  layer: (options: EmbedderOptions) =>
    Layer.effect(
      Embedder,
      Effect.gen(function*() {
        const scope = yield* Effect.scope
        const lock = yield* Semaphore.make(1)
        let built: Embedder["Service"] | undefined
        const layer = Embedder.layer(options).pipe(
          Layer.provide(OnnxRuntime.layer({ threads: options.threads ?? 1, idleUnloadMs: 10 * 60_000 }))
        )
        const embedder = lock.withPermits(1)(Effect.gen(function*() {
          if (built !== undefined) return built
          const child = yield* Scope.fork(scope)
          const context = yield* Layer.buildWithScope(layer, child).pipe(
            Effect.onError(() => Scope.close(child, Exit.void)),
            Effect.orDie
          )
          built = Context.get(context, Embedder)
          return built
        }))
        return Embedder.of({
          embed: (texts) => Effect.flatMap(embedder, (service) => service.embed(texts))
        })
      })
    )
}
