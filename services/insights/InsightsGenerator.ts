/**
 * The `Insights` generator of a server process, built on first use rather than at start: the
 * MiniLM sentence embedder (`modelsDir/minilm-l6-v2`) loads when the first insights are asked
 * for, so a server whose models folder lacks it still starts and serves everything else. A
 * build that fails (model missing or broken) is `InsightsUnavailable` for that call and is
 * tried again on the next one.
 */
import { Context, Effect, Exit, Layer, Scope, Semaphore } from "effect"
import type { Insights as InsightsPayload } from "../../src/contract/domain/Insights.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import { Embedder } from "../../search/Embedder.ts"
import { type GenerateOptions, Insights } from "./Insights.ts"
import { InsightsUnavailable, type NotEnoughSpeech } from "./InsightsErrors.ts"
import type { LlmOptions } from "./LlmClient.ts"

export interface InsightsGeneratorOptions {
  readonly modelsDir: string
  readonly threads?: number
  readonly llm?: LlmOptions | undefined
}

export class InsightsGenerator extends Context.Service<InsightsGenerator, {
  generate(transcript: Transcript, options?: GenerateOptions): Effect.Effect<InsightsPayload, NotEnoughSpeech | InsightsUnavailable>
}>()("verbatim/insights/InsightsGenerator") {
  static readonly layer = (options: InsightsGeneratorOptions) =>
    Layer.effect(
      InsightsGenerator,
      Effect.gen(function*() {
        const scope = yield* Effect.scope
        const lock = yield* Semaphore.make(1)
        let built: Insights["Service"] | undefined
        const layer = Insights.layer(options.llm === undefined ? {} : { llm: options.llm }).pipe(
          Layer.provide(Embedder.layer({ modelsDir: options.modelsDir })),
          Layer.provide(OnnxRuntime.layer({ threads: options.threads ?? 1, idleUnloadMs: 10 * 60_000 }))
        )
        const insights = lock.withPermits(1)(Effect.gen(function*() {
          if (built !== undefined) return built
          const child = yield* Scope.fork(scope)
          const context = yield* Layer.buildWithScope(layer, child).pipe(
            Effect.catchCause((cause) =>
              Effect.andThen(
                Scope.close(child, Exit.void),
                Effect.fail(new InsightsUnavailable({ reason: `the insights models could not load: ${String(cause)}`, retryable: true }))
              )
            )
          )
          built = Context.get(context, Insights)
          return built
        }))
        return InsightsGenerator.of({
          generate: (transcript: Transcript, generateOptions?: GenerateOptions) =>
            Effect.flatMap(insights, (service) => service.generate(transcript, generateOptions)).pipe(
              Effect.withSpan("InsightsGenerator.generate")
            )
        })
      })
    )
}
