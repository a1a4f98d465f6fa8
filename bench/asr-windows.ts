/**
 * ASR micro-benchmark (windows fed to the Whisper runtime directly; the end-to-end
 * benchmark is bench/asr.ts): this runtime vs transformers.js (same ONNX files) vs faster-whisper.
 *
 *   npx node bench/asr-windows.ts                 all engines, tiny.en and base
 *   npx node bench/asr-windows.ts --models whisper-tiny.en --engines ours
 *
 *   --repeat N   transcriptions per engine, the fastest counts (default 3)
 *   --words      ours with word timestamps (child runs only: --child ours --model M --words)
 *
 * One long recording is built by concatenating the speech WAV clips of shared/media
 * (cycled to ~3 minutes, 0.6 s of silence between clips). Each engine runs in its own
 * child process so that its peak RSS is its own; the parent prints RTFx (audio seconds /
 * transcription wall seconds, model load excluded and shown separately), peak RSS, WER
 * against the manifest texts and the ratios ours/peer.
 *
 * Our runtime gets the recording as ≤ 30 s windows cut at the silences between clips —
 * what the voice-activity stage will hand it. transformers.js gets the whole recording
 * with its own 30 s chunking; faster-whisper gets the whole recording with its seek loop.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer } from "effect"
import { ModelRegistry } from "../pipeline/models/ModelRegistry.ts"
import { OnnxRuntime } from "../pipeline/onnx/OnnxRuntime.ts"
import { type TranscribeResult, Whisper } from "../pipeline/whisper/Whisper.ts"
import { readWavPcm16 } from "../test/support/wav.ts"
import { ct2ModelDir, PYTHON } from "./peers/ct2Models.ts"
import { wordErrors } from "../test/support/wer.ts"

const shared = path.resolve(import.meta.dirname, "../../shared")
const modelsDir = path.join(shared, "models")
const mediaDir = path.join(shared, "media")
const SR = 16000
const GAP_S = 0.6
const TARGET_S = 180
const THREADS = 2
/** Each engine transcribes the recording this many times; the fastest run counts (shared, noisy cores). */
const REPEAT = process.argv.includes("--repeat") ? Math.max(1, Number(process.argv[process.argv.indexOf("--repeat") + 1])) : 3

interface Recording {
  readonly samples: Float32Array
  /** Clip boundaries in samples (start, end) — where the silences are. */
  readonly clips: ReadonlyArray<readonly [number, number]>
  readonly reference: string
}

const buildRecording = (): Recording => {
  const manifest: Record<string, { kind: string; text: string }> = JSON.parse(
    fs.readFileSync(path.join(mediaDir, "manifest.json"), "utf8")
  )
  const files = Object.keys(manifest)
    .filter((f) => f.endsWith(".wav") && (manifest[f]!.kind === "speech" || manifest[f]!.kind === "dialogue"))
    .sort()
  const clips = files.map((f) => ({ samples: readWavPcm16(path.join(mediaDir, f)).samples, text: manifest[f]!.text }))
  const gap = Math.round(GAP_S * SR)
  const order: Array<(typeof clips)[number]> = []
  let total = 0
  for (let i = 0; total < TARGET_S * SR; i++) {
    const c = clips[i % clips.length]!
    order.push(c)
    total += c.samples.length + gap
  }
  const samples = new Float32Array(total)
  const bounds: Array<readonly [number, number]> = []
  let pos = 0
  for (const c of order) {
    samples.set(c.samples, pos)
    bounds.push([pos, pos + c.samples.length])
    pos += c.samples.length + gap
  }
  return { samples, clips: bounds, reference: order.map((c) => c.text).join(" ") }
}

/** Packs whole clips (plus the silence after them) into windows of at most 30 s. */
const packWindows = (rec: Recording): Array<{ samples: Float32Array }> => {
  const max = 30 * SR
  const windows: Array<{ samples: Float32Array }> = []
  let start = 0
  let end = 0
  for (const [a, b] of rec.clips) {
    if (b - start > max && end > start) {
      windows.push({ samples: rec.samples.subarray(start, end) })
      start = a
    }
    end = Math.min(b + Math.round(0.3 * SR), rec.samples.length)
  }
  if (end > start) windows.push({ samples: rec.samples.subarray(start, end) })
  return windows
}

interface EngineResult {
  readonly engine: string
  readonly model: string
  readonly audioSeconds: number
  readonly loadSeconds: number
  readonly wallSeconds: number
  readonly text: string
  readonly maxRssMB: number
  readonly skipped?: string
}

const rssMB = () => process.resourceUsage().maxRSS / 1024

const runOurs = async (model: string, rec: Recording, encoder: "fp32" | "q8"): Promise<EngineResult> => {
  const layer = Whisper.layer({ defaultModel: model }).pipe(
    Layer.provide(OnnxRuntime.layer({ threads: THREADS, idleUnloadMs: 600_000, spinning: process.argv.includes("--spin") })),
    Layer.provide(ModelRegistry.layer({ modelsDir, baseUrl: "https://huggingface.co" }))
  )
  const windows = packWindows(rec)
  const program = Effect.gen(function*() {
    const whisper = yield* Whisper
    // Warm-up on one short window loads both sessions (timed as load).
    const t0 = performance.now()
    yield* whisper.transcribe([{ samples: rec.samples.subarray(0, SR) }], { language: "en", wordTimestamps: false, encoder })
    const t1 = performance.now()
    let wall = Infinity
    let result: TranscribeResult | undefined
    for (let i = 0; i < REPEAT; i++) {
      const start = performance.now()
      result = yield* whisper.transcribe(windows, {
        language: "auto",
        wordTimestamps: process.argv.includes("--words"),
        encoder,
        ...(argValue("--batch") !== undefined ? { batchSize: Number(argValue("--batch")) } : {})
      })
      wall = Math.min(wall, (performance.now() - start) / 1000)
    }
    if (process.argv.includes("--segments")) {
      result!.windows.forEach((w, i) =>
        w.segments.forEach((s) =>
          console.error(`w${i} (${(windows[i]!.samples.length / SR).toFixed(1)} s) ${s.start.toFixed(2)}-${s.end.toFixed(2)} T${s.temperature} ${s.text}`)
        )
      )
    }
    return { load: (t1 - t0) / 1000, wall, result: result! }
  })
  const { load, wall, result } = await Effect.runPromise(Effect.provide(program, layer))
  return {
    engine: encoder === "q8" ? "ours (all q8)" : "ours",
    model,
    audioSeconds: rec.samples.length / SR,
    loadSeconds: load,
    wallSeconds: wall,
    text: result.windows.flatMap((w) => w.segments.map((s) => s.text)).join(" "),
    maxRssMB: rssMB()
  }
}

const runTransformersJs = async (model: string, rec: Recording): Promise<EngineResult> => {
  const { pipeline, env } = await import("@huggingface/transformers")
  env.allowRemoteModels = false
  env.localModelPath = modelsDir + "/"
  const t0 = performance.now()
  const asr = await pipeline("automatic-speech-recognition", model, {
    dtype: { encoder_model: "fp32", decoder_model_merged: "q8" },
    session_options: { intraOpNumThreads: THREADS }
  } as Record<string, unknown>)
  const t1 = performance.now()
  const options: Record<string, unknown> = { chunk_length_s: 30, return_timestamps: true }
  if (!model.endsWith(".en")) Object.assign(options, { language: "en", task: "transcribe" })
  let wall = Infinity
  let out = { text: "" }
  for (let i = 0; i < REPEAT; i++) {
    const start = performance.now()
    out = (await asr(rec.samples, options)) as { text: string }
    wall = Math.min(wall, (performance.now() - start) / 1000)
  }
  return {
    engine: "transformers.js",
    model,
    audioSeconds: rec.samples.length / SR,
    loadSeconds: (t1 - t0) / 1000,
    wallSeconds: wall,
    text: out.text,
    maxRssMB: rssMB()
  }
}

const fasterWhisperScript = String.raw`
import json, resource, sys, time
import numpy as np
from faster_whisper import WhisperModel
model_dir, audio_path, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
audio = np.fromfile(audio_path, dtype=np.float32)
t0 = time.perf_counter()
model = WhisperModel(model_dir, device="cpu", compute_type="int8", cpu_threads=threads)
t1 = time.perf_counter()
wall = float("inf")
for _ in range(int(sys.argv[4])):
    start = time.perf_counter()
    segments, info = model.transcribe(audio, beam_size=1, temperature=0.0, vad_filter=False)
    text = " ".join(s.text.strip() for s in segments)
    wall = min(wall, time.perf_counter() - start)
print(json.dumps({"load": t1 - t0, "wall": wall, "text": text,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
`

const runFasterWhisper = (model: string, rec: Recording): EngineResult => {
  const base = { engine: "faster-whisper int8", model, audioSeconds: rec.samples.length / SR, loadSeconds: 0, wallSeconds: 0, text: "", maxRssMB: 0 }
  const importable = spawnSync(PYTHON, ["-c", "import faster_whisper"], { encoding: "utf8" })
  if (importable.status !== 0) return { ...base, skipped: "faster_whisper not importable" }
  const dir = ct2ModelDir(model)
  if (dir === undefined) return { ...base, skipped: "CTranslate2 model package not installed" }
  const audioPath = path.join(os.tmpdir(), `verbatim-bench-${process.pid}.f32`)
  fs.writeFileSync(audioPath, Buffer.from(rec.samples.buffer, rec.samples.byteOffset, rec.samples.byteLength))
  const run = spawnSync(PYTHON, ["-c", fasterWhisperScript, dir, audioPath, String(THREADS), String(REPEAT)], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024
  })
  fs.rmSync(audioPath, { force: true })
  if (run.status !== 0) return { ...base, skipped: `failed: ${run.stderr.trim().split("\n").at(-1)}` }
  const r = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as { load: number; wall: number; text: string; rss: number }
  return { ...base, loadSeconds: r.load, wallSeconds: r.wall, text: r.text, maxRssMB: r.rss }
}

const argValue = (name: string): string | undefined => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}

const child = argValue("--child")
if (child !== undefined) {
  const model = argValue("--model")!
  const rec = buildRecording()
  const result = child === "ours"
    ? await runOurs(model, rec, "fp32")
    : child === "ours-q8"
    ? await runOurs(model, rec, "q8")
    : await runTransformersJs(model, rec)
  process.stdout.write(`\n@@RESULT ${JSON.stringify(result)}\n`)
  process.exit(0)
} else {
  const models = (argValue("--models") ?? "whisper-tiny.en,whisper-base").split(",")
  const engines = (argValue("--engines") ?? "ours,transformers.js,faster-whisper").split(",")
  const rec = buildRecording()
  const audio = rec.samples.length / SR
  console.log(`recording: ${audio.toFixed(1)} s, ${rec.clips.length} clips, ${rec.reference.split(/\s+/).length} reference words; ${THREADS} threads; ${os.cpus().length} cores`)
  const results: Array<EngineResult> = []
  for (const model of models) {
    for (const engine of engines) {
      let r: EngineResult
      if (engine === "faster-whisper") r = runFasterWhisper(model, rec)
      else {
        const kind = engine === "transformers.js" ? "tjs" : engine
        const run = spawnSync(process.execPath, [import.meta.filename, "--child", kind, "--model", model, "--repeat", String(REPEAT)], {
          encoding: "utf8",
          maxBuffer: 64 * 1024 * 1024
        })
        const line = run.stdout.split("\n").find((l) => l.startsWith("@@RESULT "))
        if (line === undefined) {
          console.error(run.stderr)
          r = { engine, model, audioSeconds: audio, loadSeconds: 0, wallSeconds: 0, text: "", maxRssMB: 0, skipped: `failed (exit ${run.status})` }
        } else r = JSON.parse(line.slice("@@RESULT ".length)) as EngineResult
      }
      results.push(r)
      const e = wordErrors(rec.reference, r.text)
      console.log(
        r.skipped !== undefined
          ? `${model.padEnd(16)} ${r.engine.padEnd(20)} skipped (${r.skipped})`
          : `${model.padEnd(16)} ${r.engine.padEnd(20)} RTFx ${(r.audioSeconds / r.wallSeconds).toFixed(1).padStart(6)}  wall ${r.wallSeconds.toFixed(2).padStart(6)} s  load ${r.loadSeconds.toFixed(2)} s  peak RSS ${r.maxRssMB.toFixed(0).padStart(5)} MB  WER ${((100 * e.errors) / e.words).toFixed(1)} % (${e.errors}/${e.words})`
      )
      if (process.argv.includes("--text")) console.log(`  ${r.text}`)
    }
    const ours = results.find((r) => r.model === model && r.engine === "ours" && r.skipped === undefined)
    if (ours !== undefined) {
      for (const peer of results.filter((r) => r.model === model && r.engine !== "ours" && !r.engine.startsWith("ours") && r.skipped === undefined)) {
        const speed = (ours.audioSeconds / ours.wallSeconds) / (peer.audioSeconds / peer.wallSeconds)
        const we = wordErrors(rec.reference, ours.text)
        const wp = wordErrors(rec.reference, peer.text)
        console.log(
          `${model.padEnd(16)} ours/${peer.engine}: RTFx ×${speed.toFixed(2)}, peak RSS ×${(ours.maxRssMB / peer.maxRssMB).toFixed(2)}, WER ${((100 * we.errors) / we.words).toFixed(1)} vs ${((100 * wp.errors) / wp.words).toFixed(1)} %`
        )
      }
    }
  }
}
