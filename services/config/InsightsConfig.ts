/** The optional LLM behind abstractive insights and chat, and how long an insights request waits. */
import { Config } from "effect"
import { positiveInt, url } from "./readers.ts"
import * as Setting from "./Setting.ts"

const fields = {
  llmUrl: Setting.optional({
    env: "VERBATIM_LLM_URL",
    read: url,
    doc: "an OpenAI-compatible API root (Ollama, llama.cpp, vLLM, LM Studio) for abstractive insights"
  }),
  llmModel: Setting.setting({
    env: "VERBATIM_LLM_MODEL",
    read: Config.NonEmptyString,
    fallback: "llama3.1",
    doc: "the model name"
  }),
  llmKey: Setting.optional({
    env: "VERBATIM_LLM_KEY",
    read: Config.Redacted,
    doc: "a key sent as Bearer"
  }),
  llmTimeoutSeconds: Setting.setting({
    env: "VERBATIM_LLM_TIMEOUT_SECONDS",
    read: positiveInt,
    fallback: 120,
    doc: "per LLM request"
  }),
  insightsWaitSeconds: Setting.setting({
    env: "VERBATIM_INSIGHTS_WAIT_SECONDS",
    read: positiveInt,
    fallback: 60,
    doc: "how long a first insights request waits for generation before 503 `INSIGHTS_PENDING`"
  })
}

export class InsightsConfig extends Setting.Area<InsightsConfig>()("verbatim/config/InsightsConfig", fields) {}
