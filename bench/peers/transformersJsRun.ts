/**
 * transformers.js as a user runs it, one transcription per process (bench/asr.ts measures the
 * process): the ASR pipeline on the same ONNX files as ours (encoder fp32 + decoder q8, the
 * models' default dtypes), 30 s chunks, timestamps on, 2 intra-op threads.
 *
 *   node bench/peers/transformersJsRun.ts MODEL AUDIO.wav OUT.txt
 *
 * It reads the 16 kHz WAV the benchmark's mp3 was made from: transformers.js in Node has no
 * decoder for compressed audio (it expects samples), so decoding is not part of its time.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { readWavPcm16 } from "../../test/support/wav.ts"

const [model, audio, out] = process.argv.slice(2) as [string, string, string]
const { pipeline, env } = await import("@huggingface/transformers")
env.allowRemoteModels = false
env.localModelPath = path.resolve(import.meta.dirname, "../../../shared/models") + "/"
const asr = await pipeline("automatic-speech-recognition", model, {
  dtype: { encoder_model: "fp32", decoder_model_merged: "q8" },
  session_options: { intraOpNumThreads: 2 }
} as Record<string, unknown>)
const options: Record<string, unknown> = { chunk_length_s: 30, return_timestamps: true }
const result = (await asr(readWavPcm16(audio).samples, options)) as { text: string }
fs.writeFileSync(out, result.text)
