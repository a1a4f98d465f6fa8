/** The speech pipeline: which Whisper model, where models live, how it decodes, and how many jobs run at once. */
import { Config } from "effect"
import { defaultBatchSize } from "../../pipeline/whisper/BatchSize.ts"
import { intBetween, positiveInt, url } from "./readers.ts"
import * as Setting from "./Setting.ts"

export type ModelName = "whisper-base" | "whisper-tiny.en"
export type DecoderChoice = "auto" | "wasm" | "native"
export type EncoderChoice = "auto" | "fp32" | "q8"

const fields = {
  model: Setting.setting<ModelName>({
    env: "VERBATIM_MODEL",
    read: (env) => Config.Literals(["whisper-base", "whisper-tiny.en"], env),
    fallback: "whisper-base",
    doc: "`whisper-base` (multilingual, `language=auto`) or `whisper-tiny.en` (fast, English)"
  }),
  modelsDir: Setting.setting({
    env: "VERBATIM_MODELS_DIR",
    read: Config.NonEmptyString,
    fallback: "../shared/models",
    doc: "where model folders live (a missing model is downloaded there on first use)"
  }),
  modelsUrl: Setting.setting({
    env: "VERBATIM_MODELS_URL",
    read: url,
    fallback: "https://huggingface.co",
    doc: "where missing models are downloaded from (`<url>/<repo>/resolve/main/<file>`)"
  }),
  workers: Setting.setting({
    env: "VERBATIM_WORKERS",
    read: positiveInt,
    fallback: 1,
    doc: "jobs transcribed at once by this process (one job keeps two cores busy)"
  }),
  threads: Setting.setting({
    env: "VERBATIM_THREADS",
    read: positiveInt,
    fallback: 2,
    doc: "ONNX Runtime threads per session"
  }),
  encoder: Setting.setting<EncoderChoice>({
    env: "VERBATIM_ENCODER",
    read: (env) => Config.Literals(["auto", "fp32", "q8"], env),
    fallback: "auto",
    doc: "Whisper encoder weights: `auto` (int8 for whisper-base, fp32 for tiny.en), `fp32`, `q8`"
  }),
  batchSize: Setting.setting({
    env: "VERBATIM_BATCH_SIZE",
    read: intBetween(1, 16),
    fallback: defaultBatchSize,
    doc: "Whisper windows (up to 27 s of speech each) decoded together, 1–16: memory against speed. whisper-base on a " +
      "10-minute file: `1` 25.5 s / 717 MB peak, `2` 22.2 s / 802 MB, `4` 18.9 s / 930 MB, `8` 18.9 s / 1.37 GB " +
      "(tiny.en: `8` 6 % faster than `4`, +0.2 GB); since a batch's first decoder step runs window by window, `4` " +
      "peaks at 870–881 MB"
  }),
  beamSize: Setting.setting({
    env: "VERBATIM_BEAM_SIZE",
    read: intBetween(1, 16),
    fallback: 1,
    doc: "Beam width of Whisper's first decoding pass, 1–16: `1` is greedy (fastest); `5` is faster-whisper's default " +
      "beam search (patience 1, length-normalised ranking), more accurate on hard audio and about 2× slower " +
      "(whisper-base, 10-minute file: 34.9 s against 17.2 s greedy, and faster than faster-whisper's beam 5; figures " +
      "in the Performance section). Windows are then decoded one at a time, all beams of a window sharing one copy " +
      "of its cross-attention cache"
  }),
  conditionOnPreviousText: Setting.setting({
    env: "VERBATIM_CONDITION_ON_PREVIOUS_TEXT",
    read: Config.Boolean,
    fallback: false,
    doc: "When windows are decoded one at a time (`VERBATIM_BEAM_SIZE` above 1, or `VERBATIM_BATCH_SIZE=1`): prompt " +
      "each with up to 223 tokens of the file's text before it (`<\\|startofprev\\|>`), reset after a pass decoded " +
      "above temperature 0.5, as faster-whisper's `condition_on_previous_text`. Keeps names and spelling consistent " +
      "over a long talk; but it costs time (whisper-base, 10-minute file: beam 5 32.5 → 48.5 s, batch 1 23.6 → " +
      "29.2 s, in-process) and was no more accurate on the benchmark's recording (WER 6.4 → 6.5 % and 7.1 → 7.3 %), " +
      "and a prompt can make Whisper repeat it over non-speech. Batched greedy decoding ignores it"
  }),
  decoder: Setting.setting<DecoderChoice>({
    env: "VERBATIM_DECODER",
    read: (env) => Config.Literals(["auto", "wasm", "native"], env),
    fallback: "auto",
    doc: "`auto` (native `ffmpeg` on PATH if present, else WASM), `wasm`, `native`"
  })
}

export class SpeechConfig extends Setting.Area<SpeechConfig>()("verbatim/config/SpeechConfig", fields) {}
