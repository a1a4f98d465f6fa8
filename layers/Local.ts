/**
 * The layers a local command needs besides the pipeline (`verbatim transcribe`: links and
 * insights), apart from the server's composition root so that the CLI does not load the
 * server, the database and the HTTP API to transcribe a file (App.ts re-exports them).
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { InsightsConfig } from "../services/config/InsightsConfig.ts"
import { SecurityConfig } from "../services/config/SecurityConfig.ts"
import { SpeechConfig } from "../services/config/SpeechConfig.ts"
import { InsightsGenerator } from "../services/insights/InsightsGenerator.ts"
import type { LlmOptions } from "../services/insights/LlmClient.ts"
import { LinkResolver } from "../services/links/LinkResolver.ts"
import { SafeFetcher } from "../services/links/SafeFetcher.ts"

/** Link fetching and webhook delivery share one address policy (`VERBATIM_FETCH_ALLOW`). */
export const FetchLayer = Layer.unwrap(
  SecurityConfig.useSync((config) => {
    const fetcher = SafeFetcher.layer({ allowList: config.fetchAllow })
    return LinkResolver.layerNoDeps.pipe(Layer.provideMerge(fetcher))
  })
)

/** The OpenAI-compatible endpoint of `VERBATIM_LLM_*` (insights and "Ask this recording"); none without a URL. */
export const llmOptionsFrom = (config: InsightsConfig["Service"]): LlmOptions | undefined =>
  Option.isNone(config.llmUrl) ? undefined : {
    url: config.llmUrl.value,
    model: config.llmModel,
    timeoutMs: config.llmTimeoutSeconds * 1000,
    ...(Option.isSome(config.llmKey) ? { apiKey: Redacted.value(config.llmKey.value) } : {})
  }

/**
 * Insights generation: MiniLM from `VERBATIM_MODELS_DIR` (loaded on the first generation) and,
 * when `VERBATIM_LLM_URL` is set, the OpenAI-compatible endpoint for the abstractive fields.
 */
export const InsightsGeneratorLayer = Layer.unwrap(Effect.gen(function*() {
  const speech = yield* SpeechConfig
  return InsightsGenerator.layer({ modelsDir: speech.modelsDir, llm: llmOptionsFrom(yield* InsightsConfig) })
}))
