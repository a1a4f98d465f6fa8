import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Context, Effect, Layer, Schema } from "effect"
import { OnnxRuntime, Tensor } from "../pipeline/onnx/OnnxRuntime.ts"
import { makeWordPiece, type WordPieceJson } from "./WordPiece.ts"

/**
 * Sentence embeddings from all-MiniLM-L6-v2 (int8 ONNX, 384 dimensions): WordPiece ids →
 * `last_hidden_state` → mean over the attention mask → L2 normalisation, so cosine
 * similarity is a dot product.
 *
 * Every text is run alone (batch of one, no padding). The int8 graph quantises its
 * activations with scales taken over the whole input tensor, so a text's vector would
 * otherwise depend on its batch neighbours and their padding (cos down to 0.964 against
 * the same text alone, models README). Running texts alone makes a passage embedded at
 * index time and the same words embedded as a query identical, and matches the
 * fixture's `embedding_quantized`. Cost measured here: ~4 ms for a 20-piece sentence,
 * ~15 ms for a 130-piece passage, one thread.
 */

export const EMBEDDING_DIMENSIONS = 384
export const MINILM_FOLDER = "minilm-l6-v2"

export class EmbedderModelError extends Schema.TaggedError<EmbedderModelError>()("EmbedderModelError", {
  file: Schema.String,
  message: Schema.String
}) {}

export interface EmbedderOptions {
  /** Folder holding `minilm-l6-v2/`. */
  readonly modelsDir: string
  /** Intra-op threads of the ONNX session; defaults to the OnnxRuntime layer's. */
  readonly threads?: number
}

/** Mean of the rows of `hidden` ([tokens, dims]) followed by L2 normalisation. */
export const meanPoolNormalize = (hidden: Float32Array, tokens: number, dims: number): Float32Array => {
  const out = new Float32Array(dims)
  for (let t = 0; t < tokens; t++) {
    const row = t * dims
    for (let d = 0; d < dims; d++) out[d]! += hidden[row + d]!
  }
  let norm = 0
  for (let d = 0; d < dims; d++) {
    out[d]! /= tokens
    norm += out[d]! * out[d]!
  }
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0
  for (let d = 0; d < dims; d++) out[d]! *= scale
  return out
}

export class Embedder extends Context.Service<Embedder, {
  /** One unit vector (length 384) per text, in order. */
  embed(texts: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Float32Array>>
}>()("verbatim/search/Embedder") {
  /**
   * Reads the tokenizer and loads the graph once at construction, so a missing or broken
   * model fails the layer (EmbedderModelError / OnnxLoadError) rather than a later call.
   * After that a failing run is a defect: the inputs are always well-formed ids.
   */
  static layer(options: EmbedderOptions) {
    return Layer.effect(
      Embedder,
      Effect.gen(function*() {
        const onnx = yield* OnnxRuntime
        const folder = path.join(options.modelsDir, MINILM_FOLDER)
        const tokenizerFile = path.join(folder, "tokenizer.json")
        const modelFile = path.join(folder, "onnx/model_quantized.onnx")
        const tokenizer = yield* Effect.tryPromise({
          try: async () => makeWordPiece(JSON.parse(await fs.readFile(tokenizerFile, "utf8")) as WordPieceJson),
          catch: (cause) =>
            new EmbedderModelError({ file: tokenizerFile, message: cause instanceof Error ? cause.message : String(cause) })
        })
        const sessionOptions = options.threads === undefined ? {} : { threads: options.threads }
        // Checked once here; later calls take the shared session from OnnxRuntime, which
        // keeps it loaded while in use and unloads it after its idle time.
        yield* Effect.scoped(onnx.session(modelFile, sessionOptions))

        const embedOne = (session: Effect.Success<ReturnType<typeof onnx.session>>, text: string) => {
          const ids = tokenizer.encode(text)
          const n = ids.length
          const inputIds = new BigInt64Array(n)
          for (let i = 0; i < n; i++) inputIds[i] = BigInt(ids[i]!)
          const feeds = {
            input_ids: new Tensor("int64", inputIds, [1, n]),
            attention_mask: new Tensor("int64", new BigInt64Array(n).fill(1n), [1, n]),
            token_type_ids: new Tensor("int64", new BigInt64Array(n), [1, n])
          }
          return session.run(feeds, ["last_hidden_state"]).pipe(
            Effect.map((out) =>
              meanPoolNormalize(out["last_hidden_state"]!.data as Float32Array, n, EMBEDDING_DIMENSIONS)
            )
          )
        }

        const embed = Effect.fn("Embedder.embed")(
          function*(texts: ReadonlyArray<string>) {
            if (texts.length === 0) return []
            const session = yield* onnx.session(modelFile, sessionOptions)
            return yield* Effect.forEach(texts, (text) => embedOne(session, text))
          },
          Effect.scoped,
          Effect.orDie
        )

        return Embedder.of({ embed })
      })
    )
  }
}
