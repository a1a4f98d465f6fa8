/**
 * Insights of a finished transcript: summary, topics, quotes, speakers and chapters
 * (`src/contract/domain/Insights.ts`).
 *
 * Every field is first built extractively (`Extractive.ts`: MiniLM sentence embeddings, no
 * network). When an LLM endpoint is configured (`LlmClient` in context, or `llm` in the layer
 * options) and the call does not ask for `provider: "extractive"`, the summary and the chapter
 * titles are asked of it (`LlmInsights.ts`) and replace the extractive ones only when they pass
 * the grounding check; `providers` says which provider produced each field.
 *
 * Errors:
 * - NotEnoughSpeech when the transcript detected no speech or has fewer than `MIN_WORDS` words
 *   (3): next to nothing was said (→ 409 `NO_SPEECH`). A sentence or two is speech: a voice memo
 *   gets a summary, topics and quotes sized to it (`Extractive.ts`).
 * - InsightsUnavailable when the LLM endpoint times out, answers 5xx/429 or cannot be reached
 *   (`retryable: true`), answers another 4xx (`retryable: false`: a configuration error), or
 *   when the embedding model fails (a defect of the Embedder, `retryable: true`) (→ 503).
 * Generation is a pure function of the transcript: nothing is stored here.
 */
import { Cause, Context, Effect, Layer, Option } from "effect"
import type { Insights as InsightsPayload } from "../../src/contract/domain/Insights.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { Embedder } from "../../search/Embedder.ts"
import { extractive } from "./Extractive.ts"
import { InsightsUnavailable, NotEnoughSpeech } from "./InsightsErrors.ts"
import { LlmClient, type LlmFailure, type LlmOptions } from "./LlmClient.ts"
import { llmFields } from "./LlmInsights.ts"
import { splitSentences } from "./Sentences.ts"

/**
 * Fewer words than this → NotEnoughSpeech (409 `NO_SPEECH`). Three words is the shortest thing
 * that still says something ("Call me back."); one or two are a cough, a "yes", a stray word
 * the recogniser heard in noise. Same value as the contract's `insightsMinimumWords`.
 */
export const MIN_WORDS = 3

export interface GenerateOptions {
  /** `auto` (default): the LLM when configured, checked, else extractive. `extractive`: never the LLM. */
  readonly provider?: "auto" | "extractive"
}

export interface InsightsLayerOptions {
  /** An OpenAI-compatible chat endpoint for the abstractive summary and chapter titles. */
  readonly llm?: LlmOptions
}

const unavailable = (failure: LlmFailure) =>
  new InsightsUnavailable({ reason: `LLM ${failure.kind}: ${failure.message}`, retryable: failure.retryable })

export class Insights extends Context.Service<Insights, {
  generate(
    transcript: Transcript,
    options?: GenerateOptions
  ): Effect.Effect<InsightsPayload, NotEnoughSpeech | InsightsUnavailable>
}>()("verbatim/insights/Insights") {
  /** Needs an Embedder; uses an LlmClient from context when there is one (or built from `llm`). */
  static layer(options: InsightsLayerOptions = {}) {
    const make = Effect.gen(function*() {
      const embedder = yield* Embedder
      const llm = yield* Effect.serviceOption(LlmClient)
      // An embedder failure is a defect (a broken model run); for the caller it is a failed
      // generation, answered 503, never a half-made payload.
      const embed = (texts: ReadonlyArray<string>) =>
        embedder.embed(texts).pipe(
          Effect.catchDefect((defect) =>
            Effect.fail(new InsightsUnavailable({ reason: `embedding failed: ${Cause.pretty(Cause.die(defect))}`, retryable: true }))
          )
        )

      const generate = Effect.fn("Insights.generate")(function*(transcript: Transcript, generateOptions?: GenerateOptions) {
        const sentences = splitSentences(transcript.segments)
        const words = transcript.speech_detected ? sentences.reduce((a, s) => a + s.tokens.length, 0) : 0
        if (words < MIN_WORDS) return yield* new NotEnoughSpeech({ words, minimum: MIN_WORDS })
        const base = yield* extractive(transcript, sentences, embed)
        if (Option.isNone(llm) || generateOptions?.provider === "extractive") return base.insights
        const fields = yield* llmFields(llm.value, base).pipe(Effect.mapError(unavailable))
        if (fields.rejected.length > 0) {
          yield* Effect.logWarning("LLM insights failed the grounding check; extractive fields kept", {
            model: llm.value.model,
            rejected: fields.rejected
          })
        }
        const insights = base.insights
        return {
          ...insights,
          summary: fields.summary ?? insights.summary,
          chapters: fields.chapters ?? insights.chapters,
          providers: {
            ...insights.providers,
            summary: fields.summary === null ? "extractive" : "llm",
            chapters: fields.chapters === null ? "extractive" : "llm"
          }
        } satisfies InsightsPayload
      })

      return Insights.of({ generate })
    })
    const layer = Layer.effect(Insights, make)
    return options.llm === undefined ? layer : layer.pipe(Layer.provide(LlmClient.layer(options.llm)))
  }
}
