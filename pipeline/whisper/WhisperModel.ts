import * as fs from "node:fs/promises"
import { Effect, Schema } from "effect"
import type { ResolvedModel } from "../models/ModelRegistry.ts"
import type { DecoderDims } from "./Decoder.ts"
import type { LogitRulesConfig } from "./LogitRules.ts"
import { type GenerationConfigJson, makeTokenizer, type TokenizerJson, type WhisperTokenizer } from "./Tokenizer.ts"

/**
 * Everything about one Whisper model folder that is not a weight: tokenizer, special
 * ids, decoder shape, logit rules, alignment heads — read from its JSON files.
 */
export interface WhisperModelInfo {
  readonly name: string
  readonly multilingual: boolean
  readonly nMels: number
  readonly maxLength: number
  readonly tokenizer: WhisperTokenizer
  readonly dims: DecoderDims
  readonly rules: LogitRulesConfig
  readonly encoderPath: { readonly fp32: string; readonly q8: string }
  readonly decoderPath: string
}

export class WhisperModelFileError extends Schema.TaggedError<WhisperModelFileError>()("WhisperModelFileError", {
  model: Schema.String,
  file: Schema.String,
  message: Schema.String
}) {}

interface ConfigJson {
  readonly d_model: number
  readonly decoder_layers: number
  readonly decoder_attention_heads: number
  readonly num_mel_bins: number
  readonly vocab_size: number
}

export const loadWhisperModelInfo = Effect.fnUntraced(function*(model: ResolvedModel) {
  const readJson = <A>(file: string) =>
    Effect.tryPromise({
      try: async () => JSON.parse(await fs.readFile(model.file(file), "utf8")) as A,
      catch: (cause) =>
        new WhisperModelFileError({ model: model.name, file, message: cause instanceof Error ? cause.message : String(cause) })
    })
  const config = yield* readJson<ConfigJson>("config.json")
  const generation = yield* readJson<GenerationConfigJson>("generation_config.json")
  const tokenizerJson = yield* readJson<TokenizerJson>("tokenizer.json")
  const tokenizer = makeTokenizer(tokenizerJson, generation)
  const sp = tokenizer.special
  const info: WhisperModelInfo = {
    name: model.name,
    multilingual: sp.languages.size > 0,
    nMels: config.num_mel_bins,
    maxLength: generation.max_length ?? 448,
    tokenizer,
    dims: {
      layers: config.decoder_layers,
      heads: config.decoder_attention_heads,
      dModel: config.d_model,
      alignmentHeads: generation.alignment_heads ?? []
    },
    rules: {
      eot: sp.eot,
      noTimestamps: sp.noTimestamps,
      timestampBegin: sp.timestampBegin,
      vocabSize: config.vocab_size,
      suppress: generation.suppress_tokens ?? [],
      beginSuppress: generation.begin_suppress_tokens ?? [],
      maxInitialTimestampIndex: generation.max_initial_timestamp_index ?? 50,
      withTimestamps: true
    },
    encoderPath: { fp32: model.file("onnx/encoder_model.onnx"), q8: model.file("onnx/encoder_model_quantized.onnx") },
    decoderPath: model.file("onnx/decoder_model_merged_quantized.onnx")
  }
  return info
})
