import * as zlib from "node:zlib"
import { Context, Effect, Layer, Schema } from "effect"
import { type OnnxLoadError, OnnxRuntime, type OnnxRunError, type OnnxSession, Tensor } from "../onnx/OnnxRuntime.ts"
import { ModelRegistry, type ModelResolveError } from "../models/ModelRegistry.ts"
import { decodeBeam } from "./BeamSearch.ts"
import { type DecodeRequest, type DecodeResult, decodeBatch, languageLogits } from "./Decoder.ts"
import { makeLogMelExtractor, N_FRAMES, SAMPLE_RATE } from "./LogMel.ts"
import { StageClock } from "../StageClock.ts"
import { seededRandom } from "./LogitRules.ts"
import { splitPass } from "./Segments.ts"
import { defaultBatchSize } from "./BatchSize.ts"
import { loadWhisperModelInfo, type WhisperModelFileError, type WhisperModelInfo } from "./WhisperModel.ts"
import { groupWords, tidyWordDurations, tokenStartTimes } from "./WordAlignment.ts"

/**
 * Whisper speech recognition on onnxruntime: windows of ≤ 30 s in, timed segments out.
 *
 * Per call: windows are log-mel'd and encoded in batches, decoded together (batched
 * KV-cache decoder), re-decoded at higher temperatures when a pass looks degenerate
 * (compression ratio > 2.4, average log-probability < −1, or a repetition loop), and
 * re-decoded from the last timestamp pair when the model closed a pass early. Passes
 * that look like silence (no-speech probability > 0.6 and average log-probability < −1,
 * faster-whisper's gate) produce no segments.
 */

export interface AudioWindow {
  /** 16 kHz mono samples; only the first 30 s are used. */
  readonly samples: Float32Array
}

export interface TranscribeOptions {
  /** Registry name; default "whisper-base". */
  readonly model?: string
  /** "auto" (detect on the first window; English-only models answer "en") or an ISO-639-1 code. */
  readonly language: string
  readonly wordTimestamps: boolean
  /**
   * `transcribe` (default) or `translate`: Whisper's `<|translate|>` task token, English text
   * from speech in any language (multilingual models only; an English-only model refuses it).
   */
  readonly task?: "transcribe" | "translate"
  /**
   * The user's prompt (faster-whisper's `initial_prompt`): names, terms and spelling the
   * recording uses. Encoded as `" " + prompt.trim()`, its last `MAX_PROMPT_TOKENS` tokens go
   * after `<|startofprev|>` before every pass that has no previous text of its own: every pass
   * when not conditioning on previous text (so every window of a batch gets the same prompt),
   * else the first pass and each pass after a reset.
   */
  readonly prompt?: string
  /** Encoder weights: "fp32" (default) or "q8" (faster, base only recommended). */
  readonly encoder?: "fp32" | "q8"
  /** Windows decoded together (default from the layer, `defaultBatchSize`). */
  readonly batchSize?: number
  /**
   * Windows per encoder run (default from the layer, 1). A batch costs the same per window
   * on 2 cores, but its attention buffers grow with it (≈ 54 MB per window and layer for
   * tiny.en), so the default encodes one window at a time and batches only the decoder.
   */
  readonly encoderBatchSize?: number
  /** Seed of the sampler used by temperature fallback. */
  readonly seed?: number
  /**
   * Beam width of the temperature-0 pass (default from the layer, 1 = greedy). With more than
   * one, each window is decoded alone with that many hypotheses (OpenAI / faster-whisper beam
   * search, patience 1, length-normalised ranking); fallback passes at higher temperatures sample.
   */
  readonly beamSize?: number
  /**
   * When windows are decoded one at a time (beam search, or a batch size of 1): prompt each
   * pass with the text before it (`<|startofprev|>` + up to 223 earlier tokens), reset after a
   * pass decoded above temperature 0.5 — faster-whisper's `condition_on_previous_text` and
   * `prompt_reset_on_temperature`. Default from the layer (false: measured no more accurate on
   * bench/asr's recording, and slower: bench/README.md). Batched greedy decoding has no previous
   * text to give: the windows of a batch are decoded together.
   */
  readonly conditionOnPreviousText?: boolean
  /** The previous call's `previousTokens`, so that a file's text carries across calls. */
  readonly previousTokens?: ReadonlyArray<number>
}

export interface Word {
  readonly start: number
  readonly end: number
  readonly text: string
  /**
   * 0..1: the mean of the word's tokens' probabilities (softmax over the text vocabulary at the
   * step that chose each token, `textTokenProbability`), as faster-whisper's word `probability`.
   */
  readonly probability?: number
}

export interface Segment {
  /** Seconds from the start of the window. */
  readonly start: number
  readonly end: number
  readonly text: string
  readonly words?: ReadonlyArray<Word>
  readonly tokens: ReadonlyArray<number>
  readonly avgLogprob: number
  readonly noSpeechProb: number
  readonly compressionRatio: number
  readonly temperature: number
}

export interface WindowTranscript {
  readonly segments: ReadonlyArray<Segment>
}

export interface TranscribeResult {
  readonly language: string
  readonly windows: ReadonlyArray<WindowTranscript>
  /** Previous text for the next call's prompt (empty unless conditioning on previous text). */
  readonly previousTokens: ReadonlyArray<number>
}

export interface DecodeLogMelOptions {
  readonly model?: string
  readonly withTimestamps: boolean
  readonly language?: string
  readonly encoder?: "fp32" | "q8"
}

/** Translation needs a multilingual model: an English-only one has no `<|translate|>` training. */
export class UnsupportedTaskError extends Schema.TaggedError<UnsupportedTaskError>()("UnsupportedTaskError", {
  model: Schema.String,
  task: Schema.String
}) {}

/** The longest prompt, in tokens (OpenAI's limit for `prompt`; half the decoder context). */
export const MAX_PROMPT_TOKENS = 224

export class UnsupportedLanguageError extends Schema.TaggedError<UnsupportedLanguageError>()("UnsupportedLanguageError", {
  model: Schema.String,
  language: Schema.String
}) {}

export type WhisperError =
  | UnsupportedLanguageError
  | UnsupportedTaskError
  | ModelResolveError
  | WhisperModelFileError
  | OnnxLoadError
  | OnnxRunError

export interface WhisperOptions {
  readonly defaultModel?: string
  readonly batchSize?: number
  readonly encoderBatchSize?: number
  readonly beamSize?: number
  readonly conditionOnPreviousText?: boolean
}

const TEMPERATURES = [0, 0.2, 0.4, 0.6, 0.8, 1.0]
const COMPRESSION_RATIO_THRESHOLD = 2.4
const LOGPROB_THRESHOLD = -1
const NO_SPEECH_THRESHOLD = 0.6
/** A pass decoded above this temperature is not carried into the next prompt, nor anything before it. */
const PROMPT_RESET_TEMPERATURE = 0.5
const SECONDS_PER_TIMESTAMP = 0.02
const ENC_FRAMES = 1500
const MAX_WINDOW_SAMPLES = 30 * SAMPLE_RATE
/** Below this much audio left after a pass, a resumed pass is not worth an encoder run. */
const MIN_RESUME_SECONDS = 1
/**
 * A pass that closed with a single timestamp is only resumed with at least this much audio
 * after its last segment: model end timestamps often fall a few hundred ms before the end of
 * the last word, and re-decoding that tail alone invents words ("seven" → "Evan").
 */
const MIN_EARLY_END_RESUME_SECONDS = 2

/**
 * True when at least 0.5 s of `samples` (in 20 ms frames) is above −40 dBFS RMS: a guard
 * against spending a decoder pass on the trailing silence of a window.
 */
const hasSound = (samples: Float32Array): boolean => {
  const frame = 320
  let loud = 0
  for (let start = 0; start + frame <= samples.length; start += frame) {
    let e = 0
    for (let i = start; i < start + frame; i++) e += samples[i]! * samples[i]!
    if (e / frame > 1e-4 && ++loud * frame >= 0.5 * SAMPLE_RATE) return true
  }
  return false
}

/** Mean probability of the tokens at `indices` (NaN ones skipped); undefined when none is known. */
const wordProbability = (probs: ReadonlyArray<number>, indices: ReadonlyArray<number>): number | undefined => {
  const known = indices.map((k) => probs[k]).filter((p): p is number => p !== undefined && Number.isFinite(p))
  return known.length === 0 ? undefined : known.reduce((a, b) => a + b, 0) / known.length
}

export const compressionRatio = (text: string): number => {
  const bytes = Buffer.from(text, "utf8")
  if (bytes.length === 0) return 0
  return bytes.length / zlib.deflateSync(bytes).length
}

interface Pass {
  readonly window: number
  /** Offset of this pass into the window, in samples. */
  readonly seek: number
  readonly samples: Float32Array
}

interface Attempt {
  readonly result: DecodeResult
  readonly temperature: number
  readonly compressionRatio: number
}

export class Whisper extends Context.Service<Whisper, {
  readonly transcribe: (
    windows: ReadonlyArray<AudioWindow>,
    options: TranscribeOptions
  ) => Effect.Effect<TranscribeResult, WhisperError>
  /**
   * One greedy pass over a precomputed [nMels, 3000] log-mel, no fallback or seek:
   * returns prompt + generated ids + eot (the fixture format), for number-for-number checks.
   */
  readonly decodeLogMel: (features: Float32Array, options: DecodeLogMelOptions) => Effect.Effect<Array<number>, WhisperError>
}>()("verbatim/pipeline/Whisper") {
  static readonly layer = (options: WhisperOptions = {}) =>
    Layer.effect(
      Whisper,
      Effect.gen(function*() {
        const onnx = yield* OnnxRuntime
        const registry = yield* ModelRegistry
        const infos = new Map<string, WhisperModelInfo>()
        const defaultModel = options.defaultModel ?? "whisper-base"
        const defaultBatch = options.batchSize ?? defaultBatchSize
        const defaultEncoderBatch = options.encoderBatchSize ?? 1
        const defaultBeam = options.beamSize ?? 1
        const defaultCondition = options.conditionOnPreviousText ?? false

        // Both Whisper sessions run without onnxruntime's CPU arena: it keeps its high-water mark
        // forever (encoder attention maps, the batch's cross-attention cache at the first decoder
        // step), and measured here dropping it cost no speed and ~130–180 MB of peak RSS on base.
        const modelInfo = Effect.fnUntraced(function*(name: string) {
          const cached = infos.get(name)
          if (cached !== undefined) return cached
          const resolved = yield* registry.resolve(name)
          const info = yield* loadWhisperModelInfo(resolved)
          infos.set(name, info)
          return info
        })

        const encode = Effect.fnUntraced(function*(
          encoder: OnnxSession,
          features: Float32Array,
          batch: number,
          nMels: number,
          perRun = batch
        ) {
          const melSize = nMels * N_FRAMES
          const parts: Array<Float32Array> = []
          for (let i = 0; i < batch; i += perRun) {
            const n = Math.min(perRun, batch - i)
            const input = n === batch ? features : features.slice(i * melSize, (i + n) * melSize)
            const t0 = performance.now()
            const out = yield* encoder.run(
              { input_features: new Tensor("float32", input, [n, nMels, N_FRAMES]) },
              ["last_hidden_state"]
            )
            StageClock.add("encoder", performance.now() - t0)
            parts.push(out["last_hidden_state"]!.data as Float32Array)
          }
          if (parts.length === 1) return parts[0]!
          const hidden = new Float32Array(parts.reduce((a, p) => a + p.length, 0))
          let pos = 0
          for (const p of parts) {
            hidden.set(p, pos)
            pos += p.length
          }
          return hidden
        })

        const promptFor = (
          info: WhisperModelInfo,
          languageId: number | undefined,
          withTimestamps: boolean,
          task: "transcribe" | "translate" = "transcribe"
        ) => {
          const sp = info.tokenizer.special
          const prompt = info.multilingual ? [sp.sot, languageId!, task === "translate" ? sp.translate : sp.transcribe] : [sp.sot]
          if (!withTimestamps) prompt.push(sp.noTimestamps)
          return prompt
        }

        const languageId = (info: WhisperModelInfo, language: string) =>
          Effect.gen(function*() {
            if (!info.multilingual) {
              if (language !== "auto" && language !== "en") {
                return yield* new UnsupportedLanguageError({ model: info.name, language })
              }
              return undefined
            }
            const id = info.tokenizer.special.languages.get(language)
            if (id === undefined) return yield* new UnsupportedLanguageError({ model: info.name, language })
            return id
          })

        const detect = Effect.fnUntraced(function*(info: WhisperModelInfo, decoder: OnnxSession, hidden: Float32Array) {
          const langs = [...info.tokenizer.special.languages.entries()]
          const scores = yield* languageLogits(decoder, info.dims, hidden, info.tokenizer.special.sot, langs.map(([, id]) => id))
          let best = 0
          for (let i = 1; i < scores.length; i++) if (scores[i]! > scores[best]!) best = i
          return langs[best]!
        })

        const decodeLogMel = Effect.fn("Whisper.decodeLogMel")(function*(features: Float32Array, opts: DecodeLogMelOptions) {
          const info = yield* modelInfo(opts.model ?? defaultModel)
          const encoder = yield* onnx.session(opts.encoder === "q8" ? info.encoderPath.q8 : info.encoderPath.fp32, { memArena: false })
          const decoder = yield* onnx.session(info.decoderPath, { memArena: false })
          const hidden = yield* encode(encoder, features, 1, info.nMels)
          let langId: number | undefined
          if (info.multilingual) {
            langId = opts.language === undefined || opts.language === "auto"
              ? (yield* detect(info, decoder, hidden))[1]
              : yield* languageId(info, opts.language)
          }
          const prompt = promptFor(info, langId, opts.withTimestamps)
          const [result] = yield* decodeBatch(
            decoder,
            info.dims,
            { ...info.rules, withTimestamps: opts.withTimestamps },
            info.tokenizer.special.noSpeech,
            info.maxLength,
            [{ hidden, prompt, temperature: 0, random: Math.random, collectAlignment: false }]
          )
          return [...prompt, ...result!.tokens, info.tokenizer.special.eot]
        }, Effect.scoped)

        const transcribe = Effect.fn("Whisper.transcribe")(function*(
          windows: ReadonlyArray<AudioWindow>,
          opts: TranscribeOptions
        ) {
          const info = yield* modelInfo(opts.model ?? defaultModel)
          const encoder = yield* onnx.session(opts.encoder === "q8" ? info.encoderPath.q8 : info.encoderPath.fp32, { memArena: false })
          const decoder = yield* onnx.session(info.decoderPath, { memArena: false })
          const batchSize = Math.max(1, opts.batchSize ?? defaultBatch)
          const beamSize = Math.max(1, Math.floor(opts.beamSize ?? defaultBeam))
          const mel = makeLogMelExtractor(info.nMels)
          const melSize = info.nMels * N_FRAMES
          const hiddenSize = ENC_FRAMES * info.dims.dModel
          const tb = info.tokenizer.special.timestampBegin
          const nHeads = info.dims.alignmentHeads.length
          const random = seededRandom(opts.seed ?? 0)
          // One window at a time (beam search, or batch 1): each pass can see the text before it,
          // and a resumed pass is decoded next, as in faster-whisper's sequential mode.
          const sequential = beamSize > 1 || batchSize === 1
          const condition = sequential && (opts.conditionOnPreviousText ?? defaultCondition)
          const maxPrevious = Math.floor(info.maxLength / 2) - 1
          const task = opts.task ?? "transcribe"
          if (task === "translate" && !info.multilingual) return yield* new UnsupportedTaskError({ model: info.name, task })
          const userPrompt = opts.prompt === undefined || opts.prompt.trim() === ""
            ? []
            : info.tokenizer.encode(" " + opts.prompt.trim()).slice(-MAX_PROMPT_TOKENS)
          // Previous text since the last reset: each segment as <|start|> text <|end|>, times
          // relative to its own pass (what the model itself wrote). It starts from the user's
          // prompt, and a reset goes back to it.
          let context: Array<number> = condition
            ? (opts.previousTokens !== undefined && opts.previousTokens.length > 0 ? [...opts.previousTokens] : [...userPrompt])
            : []
          const timestampToken = (seconds: number) => tb + Math.min(1500, Math.max(0, Math.round(seconds / SECONDS_PER_TIMESTAMP)))

          const segmentsOf: Array<Array<Segment>> = windows.map(() => [])
          let queue: Array<Pass> = windows
            .map((w, i): Pass => ({ window: i, seek: 0, samples: w.samples.subarray(0, MAX_WINDOW_SAMPLES) }))
            .filter((p) => p.samples.length > 0)

          let language: string | undefined = info.multilingual ? undefined : "en"
          let langId: number | undefined
          if (opts.language !== "auto") {
            langId = yield* languageId(info, opts.language)
            language = info.multilingual ? opts.language : "en"
          }
          if (queue.length === 0) {
            return { language: language ?? "en", windows: segmentsOf.map((segments) => ({ segments })), previousTokens: context.slice(-maxPrevious) }
          }

          const featureBuffers = new Map<number, Float32Array>()
          while (queue.length > 0) {
            const groupSize = sequential ? 1 : batchSize
            const group = queue.slice(0, groupSize)
            queue = queue.slice(groupSize)
            const G = group.length
            let features = featureBuffers.get(G)
            if (features === undefined) {
              features = new Float32Array(G * melSize)
              featureBuffers.set(G, features)
            }
            StageClock.time("log-mel", () => group.forEach((p, i) => mel.compute(p.samples, features!, i * melSize)))
            const hidden = yield* encode(encoder, features, G, info.nMels, Math.max(1, opts.encoderBatchSize ?? defaultEncoderBatch))
            const hiddenOf = (i: number) => hidden.subarray(i * hiddenSize, (i + 1) * hiddenSize)

            if (language === undefined) {
              const [code, id] = yield* detect(info, decoder, hiddenOf(0))
              language = code
              langId = id
            }
            const basePrompt = promptFor(info, langId, true, task)
            const previousText = condition ? context.slice(-Math.max(maxPrevious, userPrompt.length)) : userPrompt
            const prompt = previousText.length > 0
              ? [info.tokenizer.special.sotPrev, ...previousText, ...basePrompt]
              : basePrompt
            const sotIndex = prompt.length - basePrompt.length

            // Temperature fallback: passes that look degenerate are decoded again, together.
            const attempts: Array<Array<Attempt>> = group.map(() => [])
            let pending = group.map((_, i) => i)
            for (const temperature of TEMPERATURES) {
              if (pending.length === 0) break
              const requests: Array<DecodeRequest> = pending.map((i) => ({
                hidden: hiddenOf(i),
                prompt,
                sotIndex,
                temperature,
                random,
                collectAlignment: opts.wordTimestamps
              }))
              const results = temperature === 0 && beamSize > 1
                ? yield* Effect.forEach(requests, (request) =>
                  decodeBeam(decoder, info.dims, info.rules, info.tokenizer.special.noSpeech, info.maxLength, request, { beamSize }))
                : yield* decodeBatch(decoder, info.dims, info.rules, info.tokenizer.special.noSpeech, info.maxLength, requests)
              const next: Array<number> = []
              results.forEach((result, k) => {
                const i = pending[k]!
                const text = info.tokenizer.decode(result.tokens)
                const ratio = compressionRatio(text)
                attempts[i]!.push({ result, temperature, compressionRatio: ratio })
                const silent = result.noSpeechProb > NO_SPEECH_THRESHOLD && result.avgLogprob < LOGPROB_THRESHOLD
                const degenerate = result.looped > 0 || ratio > COMPRESSION_RATIO_THRESHOLD || result.avgLogprob < LOGPROB_THRESHOLD
                if (degenerate && !silent) next.push(i)
              })
              pending = next
            }

            for (let i = 0; i < G; i++) {
              const pass = group[i]!
              const tries = attempts[i]!
              // Best attempt (faster-whisper's choice): the highest average log-probability among
              // attempts under the compression threshold and without a loop — which is the last
              // attempt when it passed, since every earlier one failed the −1 threshold — else among all.
              const acceptable = tries.filter((a) => a.compressionRatio <= COMPRESSION_RATIO_THRESHOLD && a.result.looped === 0)
              const chosen = tries.length === 1
                ? tries[0]!
                : (acceptable.length > 0 ? acceptable : tries).reduce((a, b) => (b.result.avgLogprob > a.result.avgLogprob ? b : a))
              const r = chosen.result
              const duration = pass.samples.length / SAMPLE_RATE
              const offset = pass.seek / SAMPLE_RATE
              if (r.noSpeechProb > NO_SPEECH_THRESHOLD && r.avgLogprob < LOGPROB_THRESHOLD) continue

              let tokens = r.tokens
              if (r.looped > 0) {
                // Keep one copy of the repeated block.
                let cut = tokens.length
                while (cut - 2 * r.looped >= 0) {
                  let same = true
                  for (let k = 0; k < r.looped; k++) {
                    if (tokens[cut - 1 - k] !== tokens[cut - 1 - r.looped - k]) {
                      same = false
                      break
                    }
                  }
                  if (!same) break
                  cut -= r.looped
                }
                tokens = tokens.slice(0, cut)
              }
              const split = splitPass(tokens, tb, duration, MIN_RESUME_SECONDS)
              // Resume point: the last timestamp pair (OpenAI's rule), or — beyond OpenAI — the end
              // of the last segment when the model closed the pass with audio left that still
              // carries sound: windows are packed from voice-activity regions, so an early
              // <|endoftext|> there would otherwise drop speech.
              const lastEnd = split.segments.reduce((m, seg) => Math.max(m, seg.end), 0)
              const resumeAt = r.looped > 0
                ? 0
                : split.resume
                ? split.consumed
                : lastEnd > 0 && duration - lastEnd >= MIN_EARLY_END_RESUME_SECONDS &&
                    hasSound(pass.samples.subarray(Math.round(lastEnd * SAMPLE_RATE)))
                ? lastEnd
                : 0

              // Word timings, as HF's _extract_token_timestamps: DTW over the alignment rows of every
              // position (prompt, text and timestamp tokens); a token starts when the path enters the
              // row that produced it (row P − 1 + k for generated token k).
              let rowTimes: Array<number> | undefined
              const textIndex = tokens.flatMap((t, k) => (t < info.tokenizer.special.eot ? [k] : []))
              // Rows start at <|startoftranscript|>: the previous-text prompt is not aligned to this audio.
              const P = prompt.length - sotIndex
              if (opts.wordTimestamps && nHeads > 0 && textIndex.length > 0) {
                const rows = r.alignment.slice(0, P + tokens.length)
                rowTimes = StageClock.time("word alignment (DTW)", () => tokenStartTimes(rows, nHeads, Math.ceil(pass.samples.length / (2 * 160))))
              }
              const timeOfRow = (row: number) => rowTimes![Math.min(row, rowTimes!.length - 1)]!

              // Timed words of every segment of the pass, tidied over the whole pass (OpenAI takes the
              // median word duration per window), then clamped into their own segment.
              const passWords = split.segments.map((s) => {
                if (rowTimes === undefined) return undefined
                const segText = textIndex.filter((k) => k >= s.from && k < s.to)
                return groupWords(segText.map((k) => tokens[k]!), info.tokenizer.decode).map((w) => ({
                  start: offset + timeOfRow(P - 1 + segText[w.from]!),
                  end: offset + timeOfRow(P + segText[w.to - 1]!),
                  text: w.text.trim(),
                  probability: wordProbability(r.tokenProbs, segText.slice(w.from, w.to))
                }))
              })
              tidyWordDurations(passWords.flatMap((w) => w ?? []))

              for (const [si, s] of split.segments.entries()) {
                const start = Math.min(offset + s.start, offset + duration)
                const end = Math.min(Math.max(offset + s.end, start), offset + duration)
                const segTokens = tokens.slice(s.from, s.to).filter((t) => t < tb)
                const words: Array<Word> | undefined = passWords[si]?.map((w) => {
                  const ws = Math.min(Math.max(w.start, start), end)
                  return {
                    start: ws,
                    end: Math.min(Math.max(w.end, ws), end),
                    text: w.text,
                    ...(w.probability === undefined ? {} : { probability: w.probability })
                  }
                })
                segmentsOf[pass.window]!.push({
                  start,
                  end,
                  text: info.tokenizer.decode(segTokens).trim(),
                  ...(words !== undefined ? { words } : {}),
                  tokens: segTokens,
                  avgLogprob: r.avgLogprob,
                  noSpeechProb: r.noSpeechProb,
                  compressionRatio: chosen.compressionRatio,
                  temperature: chosen.temperature
                })
              }
              if (condition) {
                if (chosen.temperature > PROMPT_RESET_TEMPERATURE) {
                  context = [...userPrompt]
                } else {
                  for (const s of split.segments) {
                    context.push(timestampToken(s.start), ...tokens.slice(s.from, s.to).filter((t) => t < tb), timestampToken(s.end))
                  }
                  if (context.length > 4 * maxPrevious) context = context.slice(-maxPrevious)
                }
              }
              if (resumeAt > 0) {
                StageClock.add(r.looped > 0 ? "passes resumed (loop)" : split.resume ? "passes resumed (open segment)" : "passes resumed (early end)", 0)
                const consumed = Math.round(resumeAt * SAMPLE_RATE)
                const resumed: Pass = { window: pass.window, seek: pass.seek + consumed, samples: pass.samples.subarray(consumed) }
                if (sequential) queue.unshift(resumed)
                else queue.push(resumed)
              }
            }
          }
          for (const segs of segmentsOf) segs.sort((a, b) => a.start - b.start)
          return { language: language ?? "en", windows: segmentsOf.map((segments) => ({ segments })), previousTokens: context.slice(-maxPrevious) }
        }, Effect.scoped)

        return Whisper.of({ transcribe, decodeLogMel })
      })
    )
}
