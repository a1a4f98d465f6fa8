import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as ort from "onnxruntime-node"
import { ModelRegistry } from "../../pipeline/models/ModelRegistry.ts"
import { OnnxRunError, OnnxRuntime, type OnnxSession, Tensor } from "../../pipeline/onnx/OnnxRuntime.ts"
import { decodeBeam } from "../../pipeline/whisper/BeamSearch.ts"
import { type DecodeRequest, decodeBatch, type DecoderDims } from "../../pipeline/whisper/Decoder.ts"
import type { LogitRulesConfig } from "../../pipeline/whisper/LogitRules.ts"
import { splitPass } from "../../pipeline/whisper/Segments.ts"
import { makeLogMelExtractor } from "../../pipeline/whisper/LogMel.ts"
import { loadWhisperModelInfo } from "../../pipeline/whisper/WhisperModel.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { readWavPcm16 } from "../support/wav.ts"

const raw = fs.readFileSync(path.join(modelsDir, "fixtures/a01_logmel_80x3000.f32"))
const logMel = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength))

const layer = Layer.mergeAll(
  OnnxRuntime.layer({ threads: 2, idleUnloadMs: 60_000 }),
  ModelRegistry.layer({ modelsDir, baseUrl: "http://127.0.0.1:9" })
)

/** whisper-base over a01: model info, decoder session, encoder output, prompts. */
const setup = Effect.gen(function*() {
  const onnx = yield* OnnxRuntime
  const registry = yield* ModelRegistry
  const info = yield* loadWhisperModelInfo(yield* registry.resolve("whisper-base"))
  const encoder = yield* onnx.session(info.encoderPath.fp32, { memArena: false })
  const decoder = yield* onnx.session(info.decoderPath, { memArena: false })
  const out = yield* encoder.run({ input_features: new Tensor("float32", logMel, [1, info.nMels, 3000]) }, ["last_hidden_state"])
  const hidden = out["last_hidden_state"]!.data as Float32Array
  const sp = info.tokenizer.special
  const withTs = [sp.sot, sp.languages.get("en")!, sp.transcribe]
  const request = (withTimestamps: boolean, collectAlignment = false): DecodeRequest => ({
    hidden,
    prompt: withTimestamps ? withTs : [...withTs, sp.noTimestamps],
    temperature: 0,
    random: Math.random,
    collectAlignment
  })
  const rules = (withTimestamps: boolean): LogitRulesConfig => ({ ...info.rules, withTimestamps })
  return { info, decoder, request, rules }
})

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const t0 = performance.now()
    const a = yield* effect
    return [a, performance.now() - t0] as const
  })

describe("decodeBeam on whisper-base (encoder fp32 + decoder q8), fixture a01", () => {
  it.effect("beam 1 is greedy decoding: same tokens, log-probabilities, no-speech probability and alignment rows", () =>
    Effect.gen(function*() {
      const { decoder, info, request, rules } = yield* setup
      for (const withTimestamps of [false, true]) {
        const req = request(withTimestamps, true)
        const [greedy] = yield* decodeBatch(decoder, info.dims, rules(withTimestamps), info.tokenizer.special.noSpeech, info.maxLength, [req])
        const beam = yield* decodeBeam(decoder, info.dims, rules(withTimestamps), info.tokenizer.special.noSpeech, info.maxLength, req, { beamSize: 1 })
        expect(beam.tokens).toEqual(greedy!.tokens)
        expect(beam.sumLogprob).toBe(greedy!.sumLogprob)
        expect(beam.avgLogprob).toBe(greedy!.avgLogprob)
        expect(beam.noSpeechProb).toBe(greedy!.noSpeechProb)
        expect(beam.looped).toBe(0)
        expect(beam.alignment.length).toBe(req.prompt.length + beam.tokens.length)
        expect(beam.alignment.length).toBe(greedy!.alignment.length)
        beam.alignment.forEach((row, i) => expect(row).toEqual(greedy!.alignment[i]))
      }
    }).pipe(Effect.scoped, Effect.provide(layer)), 120_000)

  it.effect("beam 5 without timestamps: the a01 sentence, a score at least greedy's; times greedy vs beam", () =>
    Effect.gen(function*() {
      const { decoder, info, request, rules } = yield* setup
      const noSpeech = info.tokenizer.special.noSpeech
      const req = request(false)
      // Warm-up (first run pays kernel set-up), then the timed runs.
      yield* decodeBatch(decoder, info.dims, rules(false), noSpeech, info.maxLength, [req])
      const [[greedy], greedyMs] = yield* timed(decodeBatch(decoder, info.dims, rules(false), noSpeech, info.maxLength, [req]))
      const [beam, beamMs] = yield* timed(decodeBeam(decoder, info.dims, rules(false), noSpeech, info.maxLength, req, { beamSize: 5 }))
      const text = info.tokenizer.decode(beam.tokens).trim()
      console.log(
        `a01 whisper-base, no timestamps: greedy ${greedyMs.toFixed(0)} ms (${greedy!.tokens.length} tokens, avg ${greedy!.avgLogprob.toFixed(4)}), ` +
          `beam 5 ${beamMs.toFixed(0)} ms (${beam.tokens.length} tokens, avg ${beam.avgLogprob.toFixed(4)}): "${text}"`
      )
      expect(text).toMatch(/^Good morning,? everyone\. Today we will review the .*budget.*support team\.$/)
      expect(beam.avgLogprob).toBeGreaterThanOrEqual(greedy!.avgLogprob - 0.05)
      expect(beam.sumLogprob / beam.tokens.length).toBeGreaterThanOrEqual(greedy!.sumLogprob / greedy!.tokens.length)
      expect(beam.noSpeechProb).toBe(greedy!.noSpeechProb)
      expect(beam.looped).toBe(0)
      expect(beam.alignment).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(layer)), 120_000)

  it.effect("beam 5 with timestamps: a valid timestamp structure that splitPass turns into segments, and alignment rows", () =>
    Effect.gen(function*() {
      const { decoder, info, request, rules } = yield* setup
      const tb = info.tokenizer.special.timestampBegin
      const req = request(true, true)
      const [beam, beamMs] = yield* timed(decodeBeam(decoder, info.dims, rules(true), info.tokenizer.special.noSpeech, info.maxLength, req, { beamSize: 5 }))
      const tokens = beam.tokens
      console.log(`a01 whisper-base, timestamps + alignment: beam 5 ${beamMs.toFixed(0)} ms: ${info.tokenizer.decode(tokens.filter((t) => t < tb)).trim()}`)
      // Opens on a timestamp ≤ 1 s, timestamps never decrease, and never three in a row.
      expect(tokens[0]).toBeGreaterThanOrEqual(tb)
      expect(tokens[0]).toBeLessThanOrEqual(tb + 50)
      const stamps = tokens.filter((t) => t >= tb)
      stamps.forEach((t, i) => i > 0 && expect(t).toBeGreaterThanOrEqual(stamps[i - 1]!))
      tokens.forEach((t, i) => i >= 2 && expect(t >= tb && tokens[i - 1]! >= tb && tokens[i - 2]! >= tb).toBe(false))
      const split = splitPass(tokens, tb, 112_800 / 16_000)
      expect(split.segments.length).toBeGreaterThan(0)
      for (const s of split.segments) {
        expect(s.end).toBeGreaterThanOrEqual(s.start)
        expect(s.to).toBeGreaterThan(s.from)
      }
      const text = split.segments.map((s) => info.tokenizer.decode(tokens.slice(s.from, s.to))).join("").trim()
      expect(text).toMatch(/^Good morning,? everyone\. Today we will review the .*budget.*support team\.$/)
      expect(beam.alignment.length).toBe(req.prompt.length + tokens.length)
      const nHeads = info.dims.alignmentHeads.length
      for (const row of beam.alignment) expect(row.length).toBe(nHeads * 1500)
    }).pipe(Effect.scoped, Effect.provide(layer)), 120_000)
})

describe("decodeBatch's first step (whisper-base, decoder q8)", () => {
  it.effect("runs window by window: a window's no-speech probability and first token do not depend on its batch-mate", () =>
    Effect.gen(function*() {
      const { decoder, info, request, rules } = yield* setup
      const req = request(true)
      // A batch-mate with 3× larger activations: over one joint run it would set the q8 decoder's
      // activation scale for both windows.
      const loud: DecodeRequest = { ...req, hidden: req.hidden.map((x) => 3 * x) }
      const noSpeech = info.tokenizer.special.noSpeech
      const [alone] = yield* decodeBatch(decoder, info.dims, rules(true), noSpeech, info.maxLength, [req])
      const [first, second] = yield* decodeBatch(decoder, info.dims, rules(true), noSpeech, info.maxLength, [req, loud])
      const [loudAlone] = yield* decodeBatch(decoder, info.dims, rules(true), noSpeech, info.maxLength, [loud])
      expect(first!.noSpeechProb).toBe(alone!.noSpeechProb)
      expect(first!.tokens[0]).toBe(alone!.tokens[0])
      expect(second!.noSpeechProb).toBe(loudAlone!.noSpeechProb)
      expect(first!.noSpeechProb).not.toBe(second!.noSpeechProb)
      expect(info.tokenizer.decode(first!.tokens)).toMatch(/^ Good morning,? everyone\./)
    }).pipe(Effect.scoped, Effect.provide(layer)), 120_000)
})

describe("cross-attention cache broadcast (whisper-base, decoder q8)", () => {
  it.effect("one row of the cross cache fed for 3 sequences gives the logits and cross-attention of the same row tiled 3 times", () =>
    Effect.gen(function*() {
      const { decoder, info, request } = yield* setup
      const { layers: L, heads: H, dModel: D } = info.dims
      const req = request(true)
      const kv: Array<string> = []
      for (let l = 0; l < L; l++) for (const kind of ["decoder", "encoder"]) for (const x of ["key", "value"]) kv.push(`${l}.${kind}.${x}`)
      const P = req.prompt.length
      const first: Record<string, ort.Tensor> = {
        input_ids: new Tensor("int64", BigInt64Array.from(req.prompt, BigInt), [1, P]),
        encoder_hidden_states: new Tensor("float32", req.hidden, [1, 1500, D]),
        use_cache_branch: new Tensor("bool", Uint8Array.of(0), [1])
      }
      for (const n of kv) first[`past_key_values.${n}`] = new Tensor("float32", new Float32Array(0), [1, H, 0, 64])
      const out = yield* decoder.run(first, ["logits", ...kv.map((n) => `present.${n}`)])
      const step = (tiled: boolean) => {
        const feeds: Record<string, ort.Tensor> = {
          input_ids: new Tensor("int64", BigInt64Array.of(50364n, 50414n, 2425n), [3, 1]),
          encoder_hidden_states: new Tensor("float32", new Float32Array(3 * D), [3, 1, D]),
          use_cache_branch: new Tensor("bool", Uint8Array.of(1), [1])
        }
        for (const n of kv) {
          const one = out[`present.${n}`]!.data as Float32Array
          const rows = n.includes(".decoder.") || tiled ? 3 : 1
          const data = new Float32Array(rows * one.length)
          for (let r = 0; r < rows; r++) data.set(one, r * one.length)
          feeds[`past_key_values.${n}`] = new Tensor("float32", data, [rows, H, one.length / (H * 64), 64])
        }
        return decoder.run(feeds, ["logits", "cross_attentions.5"])
      }
      const tiledOut = yield* step(true)
      const broadcastOut = yield* step(false)
      const tiled = tiledOut["logits"]!.data as Float32Array
      const broadcast = broadcastOut["logits"]!.data as Float32Array
      expect(broadcast.length).toBe(3 * info.rules.vocabSize)
      expect(Array.from(broadcast)).toEqual(Array.from(tiled))
      // Word alignment reads one row of cross-attention per sequence: three rows, as tiled.
      expect(broadcastOut["cross_attentions.5"]!.dims).toEqual([3, H, 1, 1500])
      expect(Array.from(broadcastOut["cross_attentions.5"]!.data as Float32Array)).toEqual(
        Array.from(tiledOut["cross_attentions.5"]!.data as Float32Array)
      )
    }).pipe(Effect.scoped, Effect.provide(layer)), 120_000)
})

describe("previous-text prompt (whisper-base, decoder q8)", () => {
  it.effect("the no-speech probability is read at <|startoftranscript|> behind <|startofprev|> + earlier text", () =>
    Effect.gen(function*() {
      const onnx = yield* OnnxRuntime
      const registry = yield* ModelRegistry
      const info = yield* loadWhisperModelInfo(yield* registry.resolve("whisper-base"))
      const encoder = yield* onnx.session(info.encoderPath.fp32, { memArena: false })
      const decoder = yield* onnx.session(info.decoderPath, { memArena: false })
      const features = new Float32Array(info.nMels * 3000)
      makeLogMelExtractor(info.nMels).compute(readWavPcm16(path.join(mediaDir, "n02_noise.wav")).samples, features)
      const out = yield* encoder.run({ input_features: new Tensor("float32", features, [1, info.nMels, 3000]) }, ["last_hidden_state"])
      const hidden = out["last_hidden_state"]!.data as Float32Array
      const sp = info.tokenizer.special
      const sot = [sp.sot, sp.languages.get("en")!, sp.transcribe]
      // a01's text as the model wrote it (with its timestamps): the earlier text of the prompt.
      const { tokens: previous } = (yield* decodeBatch(decoder, info.dims, { ...info.rules, withTimestamps: true }, sp.noSpeech, info.maxLength, [{
        hidden: (yield* encoder.run({ input_features: new Tensor("float32", logMel, [1, info.nMels, 3000]) }, ["last_hidden_state"]))["last_hidden_state"]!.data as Float32Array,
        prompt: sot,
        temperature: 0,
        random: Math.random,
        collectAlignment: false
      }]))[0]!
      const prompt = [sp.sotPrev, ...previous, ...sot]
      const request = (sotIndex: number | undefined): DecodeRequest => ({
        hidden,
        prompt,
        ...(sotIndex === undefined ? {} : { sotIndex }),
        temperature: 0,
        random: Math.random,
        collectAlignment: false
      })
      const rules = { ...info.rules, withTimestamps: true }
      const [plain] = yield* decodeBatch(decoder, info.dims, rules, sp.noSpeech, info.maxLength, [{ ...request(0), prompt: sot }])
      const [atSot] = yield* decodeBatch(decoder, info.dims, rules, sp.noSpeech, info.maxLength, [request(previous.length + 1)])
      const [atStart] = yield* decodeBatch(decoder, info.dims, rules, sp.noSpeech, info.maxLength, [request(undefined)])
      const beam = yield* decodeBeam(decoder, info.dims, rules, sp.noSpeech, info.maxLength, request(previous.length + 1), { beamSize: 2 })
      expect(plain!.noSpeechProb).toBeGreaterThan(0.6)
      expect(atSot!.noSpeechProb).toBeGreaterThan(0.6)
      expect(beam.noSpeechProb).toBeCloseTo(atSot!.noSpeechProb, 6)
      // Read at position 0 (behind <|startofprev|>) it would be some other token's chance.
      expect(atStart!.noSpeechProb).toBeLessThan(0.1)
      // Alignment rows start at <|startoftranscript|>: the earlier text is not aligned to this audio.
      const sotAt = previous.length + 1
      const [aligned] = yield* decodeBatch(decoder, info.dims, rules, sp.noSpeech, info.maxLength, [{ ...request(sotAt), collectAlignment: true }])
      const beamAligned = yield* decodeBeam(decoder, info.dims, rules, sp.noSpeech, info.maxLength, { ...request(sotAt), collectAlignment: true }, { beamSize: 1 })
      expect(aligned!.alignment.length).toBe(prompt.length - sotAt + aligned!.tokens.length)
      expect(beamAligned.alignment.length).toBe(aligned!.alignment.length)
      expect(Array.from(beamAligned.alignment[0]!)).toEqual(Array.from(aligned!.alignment[0]!))
    }).pipe(Effect.scoped, Effect.provide(layer)), 120_000)
})

/**
 * A scripted decoder (1 layer, 1 head, vocabulary of 6, eot = 5). Its self-attention cache
 * stores the input token ids, so the logits it returns depend on each row's whole history as
 * carried in the cache: a wrongly reordered cache gives different results. Its cross-attention
 * row for an input position is filled with that position's token id.
 */
const V = 6
const EOT = 5
const toyDims: DecoderDims = { layers: 1, heads: 1, dModel: 4, alignmentHeads: [[0, 0]] }
const toyRules: LogitRulesConfig = {
  eot: EOT,
  noTimestamps: V,
  timestampBegin: V,
  vocabSize: V,
  suppress: [],
  beginSuppress: [],
  maxInitialTimestampIndex: 0,
  withTimestamps: false
}
const PROMPT = [0]
const toyRequest: DecodeRequest = { hidden: new Float32Array(1500 * 4), prompt: PROMPT, temperature: 0, random: Math.random, collectAlignment: false }

/** Probabilities of the next token after `history` (generated tokens, prompt excluded). */
const toyModel = (history: ReadonlyArray<number>): Array<number> => {
  const key = history.join(",")
  if (key === "") return [0, 0.55, 0.45, 0, 0, 0]
  if (key === "1") return [0.24, 0.01, 0.25, 0.25, 0.25, 0] // 1 leads nowhere certain
  if (key === "2") return [0, 0, 0, 0.98, 0, 0.02]
  if (key === "2,3") return [0, 0, 0, 0, 0.01, 0.99]
  return [0.1, 0.1, 0.1, 0.1, 0.1, 0.5]
}

const toySession = (runs: Array<number>): OnnxSession => ({
  path: "toy",
  inputNames: [],
  outputNames: [],
  run: (feeds) =>
    Effect.try({
      try: () => {
        const ids = feeds["input_ids"]!
        const [nb, seq] = ids.dims as [number, number]
        runs.push(nb)
        const pastKey = feeds["past_key_values.0.decoder.key"]!
        const past = pastKey.dims[2]!
        const encKey = feeds["past_key_values.0.encoder.key"]!
        // The cross cache is one window's: fed as a single row, broadcast over the beams.
        if (past > 0 && encKey.dims[0] !== 1) throw new Error(`cross cache has ${encKey.dims[0]} rows for ${nb} beams`)
        if (past > 0 && (encKey.data as Float32Array).length !== 1500 * 64) throw new Error("cross cache data size")
        const total = past + seq
        const present = new Float32Array(nb * total * 64)
        const logits = new Float32Array(nb * seq * V)
        const cross = new Float32Array(nb * seq * 1500)
        for (let b = 0; b < nb; b++) {
          const history: Array<number> = []
          for (let p = 0; p < past; p++) history.push((pastKey.data as Float32Array)[(b * past + p) * 64]!)
          for (let s = 0; s < seq; s++) history.push(Number((ids.data as BigInt64Array)[b * seq + s]!))
          history.forEach((t, p) => present.fill(t, (b * total + p) * 64, (b * total + p + 1) * 64))
          for (let s = 0; s < seq; s++) {
            cross.fill(history[past + s]!, (b * seq + s) * 1500, (b * seq + s + 1) * 1500)
            const probs = toyModel(history.slice(PROMPT.length, past + s + 1))
            probs.forEach((q, v) => (logits[(b * seq + s) * V + v] = Math.log(q)))
          }
        }
        const out: Record<string, ort.Tensor> = {
          logits: new Tensor("float32", logits, [nb, seq, V]),
          "cross_attentions.0": new Tensor("float32", cross, [nb, 1, seq, 1500]),
          "present.0.decoder.key": new Tensor("float32", present, [nb, 1, total, 64]),
          "present.0.decoder.value": new Tensor("float32", present, [nb, 1, total, 64])
        }
        if (past === 0) {
          out["present.0.encoder.key"] = new Tensor("float32", new Float32Array(1500 * 64), [1, 1, 1500, 64])
          out["present.0.encoder.value"] = new Tensor("float32", new Float32Array(1500 * 64), [1, 1, 1500, 64])
        }
        return out
      },
      catch: (cause) => new OnnxRunError({ path: "toy", message: String(cause) })
    })
})

describe("decodeBeam on a scripted decoder", () => {
  it.effect("greedy takes the likelier first token; beam 2 finds the better sentence through the other one", () =>
    Effect.gen(function*() {
      const greedyRuns: Array<number> = []
      const greedy = yield* decodeBeam(toySession(greedyRuns), toyDims, toyRules, 0, 448, toyRequest, { beamSize: 1 })
      // 1 (0.55), then 2/3/4 (0.25 each, first index wins), then eot (0.5).
      expect(greedy.tokens).toEqual([1, 2])
      expect(greedy.sumLogprob).toBeCloseTo(Math.log(0.55) + Math.log(0.25) + Math.log(0.5), 5)
      expect(greedyRuns).toEqual([1, 1, 1])

      const runs: Array<number> = []
      const beam = yield* decodeBeam(toySession(runs), toyDims, toyRules, 2, 448, { ...toyRequest, collectAlignment: true }, { beamSize: 2 })
      expect(beam.tokens).toEqual([2, 3])
      expect(beam.sumLogprob).toBeCloseTo(Math.log(0.45) + Math.log(0.98) + Math.log(0.99), 5)
      expect(beam.avgLogprob).toBeCloseTo(beam.sumLogprob / 3, 10)
      expect(beam.noSpeechProb).toBeCloseTo(0.45, 5) // token 2's raw probability at the first position
      // The winner's own rows: the prompt, then the inputs that produced 3 and eot.
      expect(beam.alignment.map((row) => [row[0], row[1499]])).toEqual([[0, 0], [2, 2], [3, 3]])
      // First step batch 1, then the two live beams.
      expect(runs[0]).toBe(1)
      expect(runs.slice(1).every((n) => n === 2)).toBe(true)
    }))

  it.effect("patience: more finished hypotheses are waited for before stopping", () =>
    Effect.gen(function*() {
      const short: Array<number> = []
      const long: Array<number> = []
      yield* decodeBeam(toySession(short), toyDims, toyRules, 0, 448, toyRequest, { beamSize: 2, patience: 1 })
      yield* decodeBeam(toySession(long), toyDims, toyRules, 0, 448, toyRequest, { beamSize: 2, patience: 2 })
      expect(long.length).toBeGreaterThan(short.length)
    }))

  it.effect("stops at the maximum length and ranks the live hypotheses then", () =>
    Effect.gen(function*() {
      // Prompt 1 + 2 generated tokens = maxLength 3: no hypothesis can reach eot.
      const r = yield* decodeBeam(toySession([]), toyDims, toyRules, 0, 3, toyRequest, { beamSize: 2 })
      expect(r.tokens).toEqual([2, 3])
      expect(r.sumLogprob).toBeCloseTo(Math.log(0.45) + Math.log(0.98), 5)
    }))

  it.effect("fails with the session's OnnxRunError", () =>
    Effect.gen(function*() {
      const failing: OnnxSession = {
        path: "broken",
        inputNames: [],
        outputNames: [],
        run: () => Effect.fail(new OnnxRunError({ path: "broken", message: "boom" }))
      }
      const error = yield* Effect.flip(decodeBeam(failing, toyDims, toyRules, 0, 448, toyRequest, { beamSize: 3 }))
      expect(error._tag).toBe("OnnxRunError")
      expect(error.message).toBe("boom")
    }))
})
