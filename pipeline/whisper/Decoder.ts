import { Effect } from "effect"
import { type OnnxRunError, type OnnxSession, type OrtTensor, Tensor } from "../onnx/OnnxRuntime.ts"
import { StageClock } from "../StageClock.ts"
import { applyLogitRules, argmax, type LogitRulesConfig, logSumExp, maxOf, repetitionPeriod, sample } from "./LogitRules.ts"

/**
 * Batched autoregressive decoding over the merged Whisper decoder with KV cache.
 *
 * All sequences of a batch share one `session.run` per step. The decoder self-attention
 * cache (`present.*.decoder.*`) is handed back to onnxruntime as the next step's
 * `past_key_values` without touching it in JS; the cross-attention cache comes from the
 * first step only. When a sequence finishes, the batch is compacted (its rows dropped
 * from the caches) so the remaining steps pay only for live sequences.
 */

export interface DecoderDims {
  readonly layers: number
  readonly heads: number
  readonly dModel: number
  /** Layers whose cross-attention is needed for word alignment, with heads per layer. */
  readonly alignmentHeads: ReadonlyArray<readonly [number, number]>
}

export interface DecodeRequest {
  /** Encoder output for this window, [1500, dModel]. */
  readonly hidden: Float32Array
  readonly prompt: ReadonlyArray<number>
  /**
   * Index of `<|startoftranscript|>` in `prompt` (default 0): a previous-text prompt
   * (`<|startofprev|>` + earlier tokens) comes before it. The no-speech probability is read at
   * this position, as OpenAI and faster-whisper do.
   */
  readonly sotIndex?: number
  readonly temperature: number
  readonly random: () => number
  readonly collectAlignment: boolean
}

export interface DecodeResult {
  /** Generated tokens, eot excluded. */
  readonly tokens: Array<number>
  readonly sumLogprob: number
  readonly avgLogprob: number
  readonly noSpeechProb: number
  /** Repetition loop detected; tokens end inside the loop. */
  readonly looped: number
  /**
   * With `collectAlignment` (word timestamps): per generated token (same indices as `tokens`), its
   * probability among the text tokens at the step that chose it — see `textTokenProbability`.
   * NaN for timestamp tokens; empty when not collected.
   */
  readonly tokenProbs: Array<number>
  /**
   * When collected: the alignment heads' cross-attention over the 1500 encoder frames for
   * every input position from `<|startoftranscript|>` on (a previous-text prompt before it is
   * not aligned to this audio), [nHeads * 1500] each — prompt positions first, so with
   * P = prompt length − sotIndex, row P − 1 + k is the one that produced generated token k
   * (and row P − 1 + n the terminating token).
   */
  readonly alignment: Array<Float32Array>
}

const ENC_FRAMES = 1500
const HEAD = 64

interface Live {
  readonly req: number
  readonly tokens: Array<number>
  sumLogprob: number
  noSpeechProb: number
  looped: number
  readonly alignment: Array<Float32Array>
  readonly tokenProbs: Array<number>
  done: boolean
}

/**
 * The probability of `token` in a softmax over the text vocabulary (ids below `eot`) of a logits
 * row after the logit rules, at temperature 1 whatever the pass's temperature: the word confidence
 * source. Restricting to text tokens (as OpenAI's word-timing code does) keeps timestamp tokens'
 * mass out of it; NaN for a token that is not text.
 */
export const textTokenProbability = (row: Float32Array, token: number, eot: number, lse = logSumExp(row.subarray(0, eot))): number => {
  if (token >= eot) return NaN
  const p = Math.exp(row[token]! - lse)
  return Number.isFinite(p) ? Math.min(1, Math.max(0, p)) : 0
}

/** Rows `rows` of a row-major buffer, in that order (batch compaction, beam reordering). */
export const takeRows = (data: Float32Array, rowSize: number, rows: ReadonlyArray<number>): Float32Array => {
  const out = new Float32Array(rows.length * rowSize)
  rows.forEach((r, i) => out.set(data.subarray(r * rowSize, (r + 1) * rowSize), i * rowSize))
  return out
}

/**
 * Keeps rows `keep` (strictly increasing) of a row-major buffer, moved down in place; returns the
 * view of the kept rows. Batch compaction when a window finishes: the cross-attention caches are
 * 12 × 12 MB at batch 4 for whisper-base, and copying them into new buffers cost 0.3 s of copies
 * plus their garbage per 10-minute file. In place, only rows after a finished one move, and
 * nothing is allocated. `data` must be owned by the caller (here: arrays the session returned).
 */
export const compactRows = (data: Float32Array, rowSize: number, keep: ReadonlyArray<number>): Float32Array => {
  keep.forEach((r, i) => {
    // r ≥ i and later rows come from further on, so no row is overwritten before it is read.
    if (r !== i) data.copyWithin(i * rowSize, r * rowSize, (r + 1) * rowSize)
  })
  return data.subarray(0, keep.length * rowSize)
}

/** Feeds of a first step over one window: the whole prompt, no cache yet. */
export const firstStepFeeds = (dims: DecoderDims, prompt: ReadonlyArray<number>, hidden: Float32Array): Record<string, OrtTensor> => {
  const feeds: Record<string, OrtTensor> = {
    input_ids: new Tensor("int64", BigInt64Array.from(prompt, (t) => BigInt(t)), [1, prompt.length]),
    encoder_hidden_states: new Tensor("float32", hidden, [1, ENC_FRAMES, dims.dModel]),
    use_cache_branch: new Tensor("bool", Uint8Array.of(0), [1])
  }
  const empty = new Float32Array(0)
  for (let l = 0; l < dims.layers; l++) {
    for (const kind of ["decoder", "encoder"]) {
      for (const kv of ["key", "value"]) feeds[`past_key_values.${l}.${kind}.${kv}`] = new Tensor("float32", empty, [1, dims.heads, 0, HEAD])
    }
  }
  return feeds
}

/**
 * The first step of a batch, one window per run, its outputs joined along the batch axis.
 * Why not one run: onnxruntime holds the batch's cross-attention cache (12 × 12 MB at batch 4 for
 * whisper-base) while the binding copies it out, so the first step was the pipeline's memory peak
 * (two copies of it). One window at a time, onnxruntime holds one window's share. It also makes a
 * window's cross-attention projections independent of its batch-mates (the q8 decoder quantizes
 * its activations over the whole input).
 */
const firstStep = Effect.fnUntraced(function*(
  session: OnnxSession,
  dims: DecoderDims,
  requests: ReadonlyArray<DecodeRequest>,
  outputs: ReadonlyArray<string>
): Effect.fn.Return<Record<string, OrtTensor>, OnnxRunError> {
  const B = requests.length
  if (B === 1) return yield* session.run(firstStepFeeds(dims, requests[0]!.prompt, requests[0]!.hidden), outputs)
  const joined: Record<string, { data: Float32Array; dims: Array<number> }> = {}
  for (const [b, r] of requests.entries()) {
    const out = yield* session.run(firstStepFeeds(dims, r.prompt, r.hidden), outputs)
    for (const name of outputs) {
      const t = out[name]!
      const data = t.data as Float32Array
      const target = joined[name] ??= { data: new Float32Array(B * data.length), dims: [B, ...t.dims.slice(1)] }
      target.data.set(data, b * data.length)
    }
  }
  const result: Record<string, OrtTensor> = {}
  for (const [name, { data, dims: shape }] of Object.entries(joined)) result[name] = new Tensor("float32", data, shape)
  return result
})

export const decodeBatch = Effect.fnUntraced(function*(
  session: OnnxSession,
  dims: DecoderDims,
  rules: LogitRulesConfig,
  noSpeechToken: number,
  maxLength: number,
  requests: ReadonlyArray<DecodeRequest>
): Effect.fn.Return<Array<DecodeResult>, OnnxRunError> {
  const P = requests[0]!.prompt.length
  const { layers: L, heads: H, dModel: D } = dims
  const V = rules.vocabSize
  const collect = requests.some((r) => r.collectAlignment)
  const alignLayers = [...new Set(dims.alignmentHeads.map(([l]) => l))]
  const nAlign = dims.alignmentHeads.length

  const kvNames: Array<string> = []
  for (let l = 0; l < L; l++) for (const kind of ["decoder", "encoder"]) for (const kv of ["key", "value"]) kvNames.push(`${l}.${kind}.${kv}`)
  const decoderKvNames = kvNames.filter((n) => n.includes(".decoder."))
  const encoderKvNames = kvNames.filter((n) => n.includes(".encoder."))
  const crossNames = collect ? alignLayers.map((l) => `cross_attentions.${l}`) : []

  const live: Array<Live> = requests.map((_, i) => ({
    req: i,
    tokens: [],
    sumLogprob: 0,
    noSpeechProb: 0,
    looped: 0,
    alignment: [],
    tokenProbs: [],
    done: false
  }))
  let rows = live.slice() // batch row → live entry

  // Cached steps' feeds; the first step builds its own per window.
  let feeds: Record<string, OrtTensor> = {}
  const firstOutputs = ["logits", ...kvNames.map((n) => `present.${n}`), ...crossNames]
  const nextOutputs = ["logits", ...decoderKvNames.map((n) => `present.${n}`), ...crossNames]

  let encoderKv: Record<string, Float32Array> = {}
  let decoderKv: Record<string, Float32Array> = {}
  let past = 0
  const dummyHidden = new Float32Array(D)

  for (let step = 0;; step++) {
    const t0 = performance.now()
    const out = step === 0 ? yield* firstStep(session, dims, requests, firstOutputs) : yield* session.run(feeds, nextOutputs)
    const t1 = performance.now()
    StageClock.add(step === 0 ? "decoder first step (onnx)" : "decoder steps (onnx)", t1 - t0)
    const seq = step === 0 ? P : 1
    past += seq
    const logits = out["logits"]!.data as Float32Array
    if (step === 0) for (const n of encoderKvNames) encoderKv[n] = out[`present.${n}`]!.data as Float32Array
    for (const n of decoderKvNames) decoderKv[n] = out[`present.${n}`]!.data as Float32Array
    const cross = crossNames.map((n) => out[n]!.data as Float32Array)

    const nextTokens: Array<number> = []
    for (let b = 0; b < rows.length; b++) {
      const s = rows[b]!
      const req = requests[s.req]!
      const base = (b * seq + seq - 1) * V
      if (step === 0) {
        // No-speech probability: softmax of the raw logits at the <|startoftranscript|> position.
        const sotAt = (b * seq + (req.sotIndex ?? 0)) * V
        const sotRow = logits.subarray(sotAt, sotAt + V)
        s.noSpeechProb = Math.exp(sotRow[noSpeechToken]! - logSumExp(sotRow))
      }
      if (req.collectAlignment) {
        // One row per input position: every prompt position at the first step, then the new token.
        for (let pos = step === 0 ? (req.sotIndex ?? 0) : 0; pos < seq; pos++) {
          const a = new Float32Array(nAlign * ENC_FRAMES)
          dims.alignmentHeads.forEach(([l, h], k) => {
            const c = cross[alignLayers.indexOf(l)]!
            const off = ((b * H + h) * seq + pos) * ENC_FRAMES
            a.set(c.subarray(off, off + ENC_FRAMES), k * ENC_FRAMES)
          })
          s.alignment.push(a)
        }
      }
      // The output buffer is ours: rules are applied in place on its row.
      const row = logits.subarray(base, base + V)
      applyLogitRules(row, s.tokens, rules)
      const token = req.temperature > 0 ? sample(row, req.temperature, req.random) : argmax(row)
      s.sumLogprob += row[token]! - logSumExp(row, req.temperature > 0 ? maxOf(row) : row[token]!)
      if (token === rules.eot) {
        s.done = true
      } else {
        s.tokens.push(token)
        if (req.collectAlignment) s.tokenProbs.push(textTokenProbability(row, token, rules.eot))
        const period = repetitionPeriod(s.tokens)
        if (period > 0) {
          s.looped = period
          s.done = true
        } else if (P + s.tokens.length >= maxLength) {
          s.done = true
        }
      }
      nextTokens.push(token)
    }

    const keep = rows.map((s, b) => (s.done ? -1 : b)).filter((b) => b >= 0)
    if (keep.length === 0) break
    if (keep.length < rows.length) {
      const decRow = H * past * HEAD
      const encRow = H * ENC_FRAMES * HEAD
      for (const n of decoderKvNames) decoderKv[n] = compactRows(decoderKv[n]!, decRow, keep)
      for (const n of encoderKvNames) encoderKv[n] = compactRows(encoderKv[n]!, encRow, keep)
      rows = keep.map((b) => rows[b]!)
    }
    const nb = rows.length
    const stepIds = new BigInt64Array(nb)
    keep.forEach((b, i) => (stepIds[i] = BigInt(nextTokens[b]!)))
    feeds = {
      input_ids: new Tensor("int64", stepIds, [nb, 1]),
      // Not read by the cached branch, but the graph still requires it.
      encoder_hidden_states: new Tensor("float32", nb === 1 ? dummyHidden : new Float32Array(nb * D), [nb, 1, D]),
      use_cache_branch: new Tensor("bool", Uint8Array.of(1), [1])
    }
    for (const n of decoderKvNames) feeds[`past_key_values.${n}`] = new Tensor("float32", decoderKv[n]!, [nb, H, past, HEAD])
    for (const n of encoderKvNames) feeds[`past_key_values.${n}`] = new Tensor("float32", encoderKv[n]!, [nb, H, ENC_FRAMES, HEAD])
    StageClock.add("decoder glue (logit rules, caches)", performance.now() - t1)
  }

  return live.map((s): DecodeResult => ({
    tokens: s.tokens,
    sumLogprob: s.sumLogprob,
    // OpenAI: summed log-probabilities (eot included) over (generated tokens + 1).
    avgLogprob: s.sumLogprob / (s.tokens.length + 1),
    noSpeechProb: s.noSpeechProb,
    looped: s.looped,
    alignment: s.alignment,
    tokenProbs: s.tokenProbs
  }))
})

/** Language-token log-probabilities after `[<|startoftranscript|>]` for one encoded window. */
export const languageLogits = Effect.fnUntraced(function*(
  session: OnnxSession,
  dims: DecoderDims,
  hidden: Float32Array,
  sot: number,
  languageIds: ReadonlyArray<number>
): Effect.fn.Return<Array<number>, OnnxRunError> {
  const out = yield* session.run(firstStepFeeds(dims, [sot], hidden), ["logits"])
  const logits = out["logits"]!.data as Float32Array
  return languageIds.map((id) => logits[id]!)
})
