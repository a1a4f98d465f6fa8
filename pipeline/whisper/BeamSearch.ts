import { Effect } from "effect"
import { type OnnxRunError, type OnnxSession, type OrtTensor, Tensor } from "../onnx/OnnxRuntime.ts"
import { StageClock } from "../StageClock.ts"
import { type DecodeRequest, type DecodeResult, type DecoderDims, firstStepFeeds, takeRows, textTokenProbability } from "./Decoder.ts"
import { applyLogitRules, type LogitRulesConfig, logSumExp, repetitionPeriod } from "./LogitRules.ts"

/**
 * Beam search over one window with the merged Whisper decoder and its KV cache, with the
 * semantics of OpenAI whisper's `BeamSearchDecoder` + `MaximumLikelihoodRanker`
 * (length_penalty None), which faster-whisper / CTranslate2 follow:
 *
 * - temperature 0 only (`request.temperature` and `request.random` are not read);
 * - each step, every live hypothesis gets the logit rules on its own history and a
 *   log-softmax; its top `beamSize + 1` tokens are candidates scored by cumulative
 *   log-probability; candidates are taken best first — one ending in <|endoftext|> is
 *   finished, any other stays live — until `beamSize` live ones are kept;
 * - newly finished hypotheses join the finished list (best first) until it holds
 *   `round(beamSize × patience)`, which ends the search; so does the maximum length;
 * - finalize: with fewer than `beamSize` finished, the best live ones are added (without
 *   an <|endoftext|> log-probability), and the winner is the highest sumLogprob / length
 *   (length = generated tokens, eot excluded).
 *
 * Beyond OpenAI, as in `decodeBatch`: a live hypothesis whose tokens end in a repetition loop
 * (`repetitionPeriod` > 0) is moved to the finished list with `looped` set, instead of being
 * extended up to the maximum length.
 *
 * Memory: the first step runs with batch 1 (the prompt over one window). Its cross-attention
 * (encoder) cache stays one row: every beam attends to the same window, and the decoder's
 * cross-attention products are ONNX MatMuls, which broadcast a batch of 1 over the beams' rows
 * (logits identical to feeding the rows tiled). Not tiling it saves (beamSize − 1) copies of the
 * cache (144 MB at beam 5 for whisper-base) and a quarter of a step's time (12.3 → 9.1 ms at
 * beam 5, past 30: the 3 MB per layer is read once, not five times). Only the self-attention
 * cache (`present.*.decoder.*`, P + step positions) is gathered to the chosen parents each step.
 */

export interface BeamOptions {
  readonly beamSize: number
  /** Finished hypotheses wanted before stopping, as a multiple of beamSize (default 1). */
  readonly patience?: number
}

const ENC_FRAMES = 1500
const HEAD = 64

/** Alignment rows of one hypothesis, newest first, shared between hypotheses with a common prefix. */
interface AlignNode {
  readonly row: Float32Array
  readonly prev: AlignNode | undefined
}

interface Hypothesis {
  readonly tokens: Array<number>
  /** Per token, as `DecodeResult.tokenProbs` (only when collecting alignment). */
  readonly probs: Array<number>
  readonly sumLogprob: number
  readonly looped: number
  readonly align: AlignNode | undefined
}

/** Python's round() (half to even), as OpenAI computes max_candidates. */
const pyRound = (x: number): number => {
  const r = Math.round(x)
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r
}


/**
 * Indices of the `k` largest finite values of `row`, largest first; on ties the lower index
 * comes first (as argmax).
 */
const topK = (row: Float32Array, k: number): Array<number> => {
  const idx: Array<number> = []
  const val: Array<number> = []
  for (let i = 0; i < row.length; i++) {
    const v = row[i]!
    if (v === -Infinity || Number.isNaN(v)) continue
    if (idx.length === k && v <= val[k - 1]!) continue
    let j = Math.min(idx.length, k - 1)
    while (j > 0 && val[j - 1]! < v) j--
    idx.splice(j, 0, i)
    val.splice(j, 0, v)
    if (idx.length > k) {
      idx.pop()
      val.pop()
    }
  }
  return idx
}

export const decodeBeam = Effect.fnUntraced(function*(
  session: OnnxSession,
  dims: DecoderDims,
  rules: LogitRulesConfig,
  noSpeechToken: number,
  maxLength: number,
  request: DecodeRequest,
  options: BeamOptions
): Effect.fn.Return<DecodeResult, OnnxRunError> {
  const beamSize = Math.max(1, Math.floor(options.beamSize))
  const maxCandidates = Math.max(1, pyRound(beamSize * (options.patience ?? 1)))
  const P = request.prompt.length
  const { layers: L, heads: H, dModel: D } = dims
  const V = rules.vocabSize
  const collect = request.collectAlignment
  const alignLayers = [...new Set(dims.alignmentHeads.map(([l]) => l))]
  const nAlign = dims.alignmentHeads.length

  const kvNames: Array<string> = []
  for (let l = 0; l < L; l++) for (const kind of ["decoder", "encoder"]) for (const kv of ["key", "value"]) kvNames.push(`${l}.${kind}.${kv}`)
  const decoderKvNames = kvNames.filter((n) => n.includes(".decoder."))
  const encoderKvNames = kvNames.filter((n) => n.includes(".encoder."))
  const crossNames = collect ? alignLayers.map((l) => `cross_attentions.${l}`) : []
  const firstOutputs = ["logits", ...kvNames.map((n) => `present.${n}`), ...crossNames]
  const nextOutputs = ["logits", ...decoderKvNames.map((n) => `present.${n}`), ...crossNames]

  let feeds: Record<string, OrtTensor> = firstStepFeeds(dims, request.prompt, request.hidden)

  const encoderKv: Record<string, Float32Array> = {}
  const decoderKv: Record<string, Float32Array> = {}
  const promptRows: Array<Float32Array> = []
  const dummyHidden = new Float32Array(beamSize * D)
  let noSpeechProb = 0
  let past = 0

  let live: Array<Hypothesis> = [{ tokens: [], probs: [], sumLogprob: 0, looped: 0, align: undefined }]
  const finished: Array<Hypothesis> = []

  for (let step = 0;; step++) {
    const t0 = performance.now()
    const out = yield* session.run(feeds, step === 0 ? firstOutputs : nextOutputs)
    StageClock.add(step === 0 ? "decoder first step (onnx)" : "decoder steps (onnx)", performance.now() - t0)
    const seq = step === 0 ? P : 1
    past += seq
    const logits = out["logits"]!.data as Float32Array
    const cross = crossNames.map((n) => out[n]!.data as Float32Array)
    const alignRow = (b: number, pos: number) => {
      const a = new Float32Array(nAlign * ENC_FRAMES)
      dims.alignmentHeads.forEach(([l, h], k) => {
        const c = cross[alignLayers.indexOf(l)]!
        const off = ((b * H + h) * seq + pos) * ENC_FRAMES
        a.set(c.subarray(off, off + ENC_FRAMES), k * ENC_FRAMES)
      })
      return a
    }

    if (step === 0) {
      // No-speech probability: softmax of the raw logits at the <|startoftranscript|> position.
      const sotAt = (request.sotIndex ?? 0) * V
      const sotRow = logits.subarray(sotAt, sotAt + V)
      noSpeechProb = Math.exp(sotRow[noSpeechToken]! - logSumExp(sotRow))
      // Alignment rows from <|startoftranscript|> on, as decodeBatch collects them.
      if (collect) for (let pos = request.sotIndex ?? 0; pos < P; pos++) promptRows.push(alignRow(0, pos))
      // One window for every beam: its cross-attention cache, fed as one row and broadcast.
      for (const n of encoderKvNames) encoderKv[n] = out[`present.${n}`]!.data as Float32Array
    }

    // Candidates: top beamSize + 1 of every live hypothesis, scored by cumulative log-probability.
    const candidates: Array<{ readonly score: number; readonly token: number; readonly parent: number; readonly prob: number }> = []
    for (let b = 0; b < live.length; b++) {
      const h = live[b]!
      const base = (b * seq + seq - 1) * V
      // The output buffer is ours: rules are applied in place on its row.
      const row = logits.subarray(base, base + V)
      applyLogitRules(row, h.tokens, rules)
      const lse = logSumExp(row)
      // The text-vocabulary normaliser once per row, not per candidate.
      const textLse = collect ? logSumExp(row.subarray(0, rules.eot)) : 0
      for (const token of topK(row, beamSize + 1)) {
        const prob = collect ? textTokenProbability(row, token, rules.eot, textLse) : NaN
        candidates.push({ score: h.sumLogprob + (row[token]! - lse), token, parent: b, prob })
      }
    }
    candidates.sort((a, b) => b.score - a.score)

    const next: Array<Hypothesis> = []
    const parents: Array<number> = []
    const newlyFinished: Array<Hypothesis> = []
    // Rows up to the chosen token: the prompt rows cover step 0, later steps add one per beam.
    const stepRows = collect && step > 0 ? live.map((_, b) => alignRow(b, 0)) : []
    const chainOf = (b: number): AlignNode | undefined =>
      collect && step > 0 ? { row: stepRows[b]!, prev: live[b]!.align } : live[b]!.align
    for (const c of candidates) {
      const parent = live[c.parent]!
      if (c.token === rules.eot) {
        newlyFinished.push({ tokens: parent.tokens, probs: parent.probs, sumLogprob: c.score, looped: 0, align: chainOf(c.parent) })
        continue
      }
      const tokens = [...parent.tokens, c.token]
      const probs = collect ? [...parent.probs, c.prob] : parent.probs
      const period = repetitionPeriod(tokens)
      if (period > 0) {
        newlyFinished.push({ tokens, probs, sumLogprob: c.score, looped: period, align: chainOf(c.parent) })
        continue
      }
      next.push({ tokens, probs, sumLogprob: c.score, looped: 0, align: chainOf(c.parent) })
      parents.push(c.parent)
      if (next.length === beamSize) break
    }
    for (const f of newlyFinished) {
      if (finished.length >= maxCandidates) break
      finished.push(f)
    }
    const rowsNow = live.length
    live = next
    if (finished.length >= maxCandidates || live.length === 0 || P + live[0]!.tokens.length >= maxLength) break

    // Self-attention caches follow their parents; the cross-attention rows are all the same window.
    const nb = live.length
    const identity = nb === rowsNow && parents.every((p, i) => p === i)
    for (const n of decoderKvNames) {
      const data = out[`present.${n}`]!.data as Float32Array
      decoderKv[n] = identity ? data : takeRows(data, H * past * HEAD, parents)
    }
    const stepIds = BigInt64Array.from(live, (h) => BigInt(h.tokens[h.tokens.length - 1]!))
    feeds = {
      input_ids: new Tensor("int64", stepIds, [nb, 1]),
      // Not read by the cached branch, but the graph still requires it.
      encoder_hidden_states: new Tensor("float32", dummyHidden.subarray(0, nb * D), [nb, 1, D]),
      use_cache_branch: new Tensor("bool", Uint8Array.of(1), [1])
    }
    for (const n of decoderKvNames) feeds[`past_key_values.${n}`] = new Tensor("float32", decoderKv[n]!, [nb, H, past, HEAD])
    for (const n of encoderKvNames) feeds[`past_key_values.${n}`] = new Tensor("float32", encoderKv[n]!, [1, H, ENC_FRAMES, HEAD])
  }

  // OpenAI's finalize: too few finished → the best live hypotheses compete too.
  if (finished.length < beamSize) {
    for (const h of [...live].sort((a, b) => b.sumLogprob - a.sumLogprob)) {
      if (finished.length >= beamSize) break
      finished.push(h)
    }
  }
  const score = (h: Hypothesis) => h.sumLogprob / Math.max(1, h.tokens.length)
  // Nothing at all only when every logit was −∞: an empty pass, as unlikely as it is useless.
  const best = finished.reduce(
    (a, b) => (score(b) > score(a) ? b : a),
    finished[0] ?? { tokens: [], probs: [], sumLogprob: -Infinity, looped: 0, align: undefined }
  )

  const alignment: Array<Float32Array> = []
  if (collect) {
    for (let node = best.align; node !== undefined; node = node.prev) alignment.push(node.row)
    alignment.reverse()
    alignment.unshift(...promptRows)
  }
  return {
    tokens: best.tokens,
    sumLogprob: best.sumLogprob,
    // OpenAI: summed log-probabilities (eot included) over (generated tokens + 1).
    avgLogprob: best.sumLogprob / (best.tokens.length + 1),
    noSpeechProb,
    looped: best.looped,
    alignment,
    tokenProbs: collect ? best.probs : []
  }
})
