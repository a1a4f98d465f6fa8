/**
 * The layers a local command needs besides the pipeline (`verbatim transcribe`: links and
 * insights), apart from the server's composition root so that the CLI does not load the
 * server, the database and the HTTP API to transcribe a file (App.ts re-exports them).
 */
import { Layer, Option, Redacted } from "effect"
import { AppConfig, type AppConfigShape } from "../services/AppConfig.ts"
import { InsightsGenerator } from "../services/insights/InsightsGenerator.ts"
import type { LlmOptions } from "../services/insights/LlmClient.ts"
import { LinkResolver } from "../services/links/LinkResolver.ts"
import { SafeFetcher } from "../services/links/SafeFetcher.ts"

/** Link fetching and webhook delivery share one address policy (`VERBATIM_FETCH_ALLOW`). */
export const FetchLayer = Layer.unwrap(
  AppConfig.useSync((config) => {
    const fetcher = SafeFetcher.layer({ allowList: config.fetchAllow })
    return LinkResolver.layerNoDeps.pipe(Layer.provideMerge(fetcher))
  })
)

/** The OpenAI-compatible endpoint of `VERBATIM_LLM_*` (insights and "Ask this recording"); none without a URL. */
export const llmOptionsFrom = (config: AppConfigShape): LlmOptions | undefined =>
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
export const InsightsGeneratorLayer = Layer.unwrap(AppConfig.useSync((config) =>
  InsightsGenerator.layer({ modelsDir: config.modelsDir, llm: llmOptionsFrom(config) })
))
