/**
 * Where our time goes on one file: the service's pipeline (the layers the worker thread builds,
 * with the service's defaults for `model`) run in this process, then the stage clock printed.
 *
 *   node bench/asrProfile.ts MODEL FILE
 *
 * Stages are wall time summed over calls in the thread that runs the pipeline (onnxruntime-node
 * runs sessions on the calling thread, so VAD and Whisper alternate); decoding runs in its own
 * WASM worker. Nested stages (indented) are part of "recognition".
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import { wordErrors } from "../test/support/wer.ts"
import { Transcriber } from "../pipeline/Transcriber.ts"
import { StageClock } from "../pipeline/StageClock.ts"
import { localPipeline } from "../pipeline/worker/LocalPipeline.ts"

const [model, file] = process.argv.slice(2) as [string, string]
const started = performance.now()
const program = Effect.gen(function*() {
  const transcriber = yield* Transcriber
  return yield* transcriber.transcribe({ path: file, language: "auto", wordTimestamps: false }, () => Effect.void)
})
const result = await Effect.runPromise(Effect.provide(program, localPipeline({
  decoder: "auto",
  modelsDir: process.env.VERBATIM_MODELS_DIR ?? "../shared/models",
  modelsUrl: "https://huggingface.co",
  model,
  encoder: model === "whisper-base" ? "q8" : "fp32",
  threads: 2,
  idleUnloadMs: 600_000,
  reportDownloads: false,
  niceness: 0,
  // VERBATIM_BATCH_SIZE, VERBATIM_BEAM_SIZE and VERBATIM_CONDITION_ON_PREVIOUS_TEXT as the service reads them.
  ...(process.env.VERBATIM_BATCH_SIZE ? { batchSize: Number(process.env.VERBATIM_BATCH_SIZE) } : {}),
  ...(process.env.VERBATIM_BEAM_SIZE ? { beamSize: Number(process.env.VERBATIM_BEAM_SIZE) } : {}),
  ...(["true", "yes", "on", "1"].includes(process.env.VERBATIM_CONDITION_ON_PREVIOUS_TEXT ?? "") ? { conditionOnPreviousText: true } : {})
})))
const wall = performance.now() - started
const stages = StageClock.snapshot()
// Stages inside "recognition" are nested in it.
const inner = new Set(["decoder first step (onnx)", "decoder steps (onnx)", "decoder glue (logit rules, caches)", "encoder", "log-mel", "word alignment (DTW)"])
const cpu = process.cpuUsage()
console.log(`profile ${model}: ${result.durationSeconds} s of audio, wall ${(wall / 1000).toFixed(1)} s in-process, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s`)
console.log("| stage | seconds (summed over calls) | calls | share of wall |\n|---|---:|---:|---:|")
for (const s of stages) {
  console.log(`| ${inner.has(s.stage) ? "  " : ""}${s.stage} | ${(s.ms / 1000).toFixed(2)} | ${s.count} | ${((100 * s.ms) / wall).toFixed(1)} % |`)
}
// The benchmark's recording carries its reference beside it.
const meta = file.replace(/\.[^.]+$/, ".json")
if (fs.existsSync(meta)) {
  const e = wordErrors((JSON.parse(fs.readFileSync(meta, "utf8")) as { reference: string }).reference, result.transcript.text)
  console.log(`WER ${((100 * e.errors) / e.words).toFixed(1)} % (${e.errors}/${e.words})`)
}
if (process.argv.includes("--text")) console.log(result.transcript.text)
process.exit(0)
