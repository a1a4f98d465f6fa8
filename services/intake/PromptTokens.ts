/**
 * What a submitted `prompt` costs in Whisper tokens, counted with the configured model's own
 * tokenizer (the English-only and multilingual vocabularies differ), as the decoder is fed it
 * (`" " + prompt.trim()`). The tokenizer is read on the first prompt, not at start.
 */
import { Context, Effect, Layer } from "effect"
import { ModelRegistry } from "../../pipeline/models/ModelRegistry.ts"
import type { WhisperTokenizer } from "../../pipeline/whisper/Tokenizer.ts"
import { loadWhisperModelInfo } from "../../pipeline/whisper/WhisperModel.ts"
import { SpeechConfig } from "../config/SpeechConfig.ts"

export class PromptTokens extends Context.Service<PromptTokens, {
  /**
   * Tokens of `prompt` with the configured model; undefined when its tokenizer cannot be had
   * (the model is not downloaded and cannot be): the pipeline then keeps the prompt's last
   * 224 tokens, as OpenAI's API does with a longer one.
   */
  count(prompt: string): Effect.Effect<number | undefined>
}>()("verbatim/intake/PromptTokens") {
  static readonly layer = Layer.effect(
    PromptTokens,
    Effect.gen(function*() {
      const config = yield* SpeechConfig
      const registry = yield* ModelRegistry
      let tokenizer: WhisperTokenizer | undefined

      const load = registry.resolve(config.model).pipe(
        Effect.flatMap(loadWhisperModelInfo),
        Effect.map((info) => (tokenizer = info.tokenizer)),
        Effect.catch(() => Effect.succeed(undefined))
      )

      const count = Effect.fn("PromptTokens.count")(function*(prompt: string) {
        const loaded = tokenizer ?? (yield* load)
        return loaded?.encode(" " + prompt.trim()).length
      })

      return PromptTokens.of({ count })
    })
  )
}
