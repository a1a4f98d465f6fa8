/**
 * Speech recognition end to end, as a user compares engines: one long mp3 in, a transcript out,
 * each engine a whole process (start, model load, decoding, voice activity, recognition,
 * writing), measured by /usr/bin/time: wall, CPU seconds (user + system), peak RSS. WER against
 * the media manifest texts with one normaliser for all (test/support/wer.ts, the media README's).
 *
 *   npx node bench/asr.ts                                   # base and tiny.en, every engine, 3 rounds
 *   npx node bench/asr.ts --models whisper-base --engines ours,fw-batched --repeat 1
 *   npx node bench/asr.ts --profile --models whisper-base --engines none   # where our time goes
 *
 *   --minutes N   length of the recording (default 10)
 *   --repeat N    rounds (default 3); engines alternate within a round, medians are reported
 *   --text        print each engine's transcript once
 *   --profile     after the rounds, run our pipeline in-process with stage timers and print them
 *
 * The recording (built once, cached in bench/.peers/cache/): the speech clips of shared/media
 * (a01–a08: read, synthetic, noisy, dialogue, a three-speaker interview) cycled, with gaps of
 * 1–4 s between clips and, after every second clip, a block of music, noise or silence
 * (n01–n03, looped to 8–14 s), until `--minutes`; about two thirds of it is speech. Written as a
 * 16 kHz WAV and encoded to mp3 (64 kb/s) with the service's own WASM ffmpeg.
 *
 * Engines (2 threads each, greedy unless named):
 *   ours             `verbatim transcribe FILE --format json` (bin/verbatim.mjs, the CLI a user runs, its defaults)
 *   ours-beam5       the same with VERBATIM_BEAM_SIZE=5
 *   ours-batch8      the same with VERBATIM_BATCH_SIZE=8 (not in the default list)
 *   fw-batched       faster-whisper int8, BatchedInferencePipeline, batch 8, beam 1 (its VAD on)
 *   fw-sequential    faster-whisper int8, transcribe(beam_size=1, vad_filter=True)
 *   fw-beam5         faster-whisper int8, transcribe(beam_size=5, vad_filter=True) (its default beam)
 *   transformers.js  @huggingface/transformers on the same ONNX files, 30 s chunks (reads the WAV)
 * faster-whisper needs bench/.peers/venv (see bench/README.md); without it those rows are skipped.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { readWavPcm16, writeWav } from "../test/support/wav.ts"
import { wordErrors } from "../test/support/wer.ts"
import { ct2ModelDir, fasterWhisperImportable, PYTHON } from "./peers/ct2Models.ts"
import { flag, option } from "./Args.ts"

const root = path.resolve(import.meta.dirname, "..")
const mediaDir = path.resolve(root, "../shared/media")
const cacheDir = path.join(root, "bench/.peers/cache")
const SR = 16_000
const THREADS = 2

const minutes = Number(option("minutes", "10"))
const repeat = Math.max(1, Number(option("repeat", "3")))
const models = option("models", "whisper-base,whisper-tiny.en").split(",")
const engines = option("engines", "ours,ours-beam5,fw-batched,fw-sequential,fw-beam5,transformers.js").split(",").filter((e) => e !== "none")
const node = process.execPath
const nodeFlags = ["--experimental-strip-types", "--disable-warning=ExperimentalWarning"]

interface Recording {
  readonly wav: string
  readonly mp3: string
  readonly seconds: number
  readonly speechSeconds: number
  readonly reference: string
}

const buildRecording = (): Recording => {
  fs.mkdirSync(cacheDir, { recursive: true })
  const base = path.join(cacheDir, `asr-${minutes}min`)
  const meta = `${base}.json`
  if (fs.existsSync(meta) && fs.existsSync(`${base}.mp3`)) return JSON.parse(fs.readFileSync(meta, "utf8")) as Recording
  const manifest: Record<string, { kind: string; text: string }> = JSON.parse(fs.readFileSync(path.join(mediaDir, "manifest.json"), "utf8"))
  const speech = Object.keys(manifest).filter((f) => /^a0\d_.*\.wav$/.test(f)).sort()
    .map((f) => ({ samples: readWavPcm16(path.join(mediaDir, f)).samples, text: manifest[f]!.text }))
  const loop = (file: string, seconds: number) => {
    const clip = readWavPcm16(path.join(mediaDir, file)).samples
    const out = new Float32Array(Math.round(seconds * SR))
    for (let i = 0; i < out.length; i++) out[i] = clip[i % clip.length]!
    return out
  }
  const blocks = [loop("n03_music.wav", 13.5), loop("n02_noise.wav", 12), loop("n01_silence.wav", 10), loop("n03_music.wav", 9)]
  const gaps = [1, 2.5, 4, 1.5, 3, 2]
  const target = minutes * 60 * SR
  const parts: Array<Float32Array> = []
  const texts: Array<string> = []
  let length = 0
  let speechSamples = 0
  for (let i = 0; length < target; i++) {
    const clip = speech[i % speech.length]!
    parts.push(clip.samples, new Float32Array(Math.round(gaps[i % gaps.length]! * SR)))
    texts.push(clip.text)
    speechSamples += clip.samples.length
    length += clip.samples.length + Math.round(gaps[i % gaps.length]! * SR)
    if (i % 2 === 1) {
      const block = blocks[Math.floor(i / 2) % blocks.length]!
      parts.push(block)
      length += block.length
    }
  }
  const samples = new Float32Array(length)
  let at = 0
  for (const p of parts) {
    samples.set(p, at)
    at += p.length
  }
  writeWav(`${base}.wav`, samples)
  const enc = spawnSync(node, [...nodeFlags, path.join(root, "bench/peers/encodeMp3.ts"), `${base}.wav`, `${base}.mp3`], { encoding: "utf8" })
  if (enc.status !== 0) throw new Error(`mp3 encoding failed: ${enc.stderr}`)
  const recording: Recording = { wav: `${base}.wav`, mp3: `${base}.mp3`, seconds: length / SR, speechSeconds: speechSamples / SR, reference: texts.join(" ") }
  fs.writeFileSync(meta, JSON.stringify(recording))
  return recording
}

interface Run {
  readonly wall: number
  readonly cpu: number
  readonly rssMB: number
  readonly text: string
}

type Outcome = Run | { readonly skipped: string }

/** Runs `command` under /usr/bin/time; `read` gets the transcript from what the engine wrote. */
const measured = (command: ReadonlyArray<string>, env: Record<string, string>, out: string, read: (out: string) => string): Outcome => {
  const timing = path.join(os.tmpdir(), `verbatim-asr-time-${process.pid}`)
  fs.rmSync(out, { force: true })
  const run = spawnSync("/usr/bin/time", ["-f", "%e %U %S %M", "-o", timing, ...command], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024
  })
  if (run.status !== 0 || !fs.existsSync(out)) {
    return { skipped: `failed (exit ${run.status}): ${(run.stderr ?? "").trim().split("\n").slice(-3).join(" | ")}` }
  }
  const [wall, user, sys, rssKb] = fs.readFileSync(timing, "utf8").trim().split("\n").at(-1)!.split(" ").map(Number) as [number, number, number, number]
  return { wall, cpu: user + sys, rssMB: rssKb / 1024, text: read(out) }
}

const runEngine = (engine: string, model: string, rec: Recording): Outcome => {
  const out = path.join(os.tmpdir(), `verbatim-asr-out-${process.pid}-${engine}`)
  if (engine === "ours" || engine === "ours-beam5" || engine === "ours-batch8") {
    const env: Record<string, string> = { VERBATIM_MODEL: model, VERBATIM_THREADS: String(THREADS), VERBATIM_LOG_LEVEL: "warn" }
    if (engine === "ours-beam5") env["VERBATIM_BEAM_SIZE"] = "5"
    if (engine === "ours-batch8") env["VERBATIM_BATCH_SIZE"] = "8"
    return measured([node, ...nodeFlags, "bin/verbatim.mjs", "transcribe", rec.mp3, "--format", "json", "--out", out], env, out,
      (file) => (JSON.parse(fs.readFileSync(file, "utf8")) as { text: string }).text)
  }
  if (engine === "transformers.js") {
    return measured([node, ...nodeFlags, "bench/peers/transformersJsRun.ts", model, rec.wav, out], {}, out, (file) => fs.readFileSync(file, "utf8"))
  }
  if (engine.startsWith("fw-")) {
    if (!fasterWhisperImportable()) return { skipped: "faster_whisper not importable (see bench/README.md)" }
    const dir = ct2ModelDir(model)
    if (dir === undefined) return { skipped: "CTranslate2 model package not installed" }
    return measured([PYTHON, "bench/peers/faster_whisper_run.py", dir, rec.mp3, engine.slice(3), String(THREADS), out], { OMP_NUM_THREADS: String(THREADS) }, out,
      (file) => fs.readFileSync(file, "utf8"))
  }
  return { skipped: `unknown engine ${engine}` }
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const pct = (x: number) => `${(100 * x).toFixed(1)} %`

const rec = buildRecording()
const refWords = rec.reference.split(/\s+/).length
console.log(
  `recording: ${rec.seconds.toFixed(0)} s mp3 (${pct(rec.speechSeconds / rec.seconds)} speech), ${refWords} reference words; ` +
    `${THREADS} threads; ${os.cpus().length} cores; load average ${os.loadavg()[0]!.toFixed(1)}`
)

for (const model of models) {
  const runs = new Map<string, Array<Run>>()
  const skipped = new Map<string, string>()
  for (let round = 1; round <= repeat; round++) {
    // Alternate the order each round so no engine always runs after the same neighbour.
    const order = round % 2 === 1 ? engines : [...engines].reverse()
    for (const engine of order) {
      if (skipped.has(engine)) continue
      const r = runEngine(engine, model, rec)
      if ("skipped" in r) {
        skipped.set(engine, r.skipped)
        console.log(`${model} ${engine}: skipped (${r.skipped})`)
        continue
      }
      runs.set(engine, [...(runs.get(engine) ?? []), r])
      const e = wordErrors(rec.reference, r.text)
      console.log(`${model} round ${round} ${engine.padEnd(16)} wall ${r.wall.toFixed(1).padStart(6)} s  CPU ${r.cpu.toFixed(1).padStart(6)} s  peak RSS ${r.rssMB.toFixed(0).padStart(5)} MB  WER ${pct(e.errors / e.words)}`)
      if (flag("text") && round === 1) console.log(`  ${r.text}`)
    }
  }
  const summary = new Map<string, { wall: number; cpu: number; rss: number; wer: number }>()
  for (const [engine, rs] of runs) {
    const wers = rs.map((r) => { const e = wordErrors(rec.reference, r.text); return e.errors / e.words })
    summary.set(engine, { wall: median(rs.map((r) => r.wall)), cpu: median(rs.map((r) => r.cpu)), rss: median(rs.map((r) => r.rssMB)), wer: median(wers) })
  }
  console.log(`\n${model}: medians of ${repeat} (audio ${rec.seconds.toFixed(0)} s)`)
  console.log("| engine | wall | × real time | CPU | peak RSS | WER |\n|---|---:|---:|---:|---:|---:|")
  for (const [engine, s] of summary) {
    console.log(`| ${engine} | ${s.wall.toFixed(1)} s | ${(rec.seconds / s.wall).toFixed(1)}× | ${s.cpu.toFixed(1)} s | ${s.rss.toFixed(0)} MB | ${pct(s.wer)} |`)
  }
  const peer = summary.get("fw-batched")
  for (const mine of ["ours", "ours-beam5", "ours-batch8"]) {
    const ours = summary.get(mine)
    if (ours === undefined) continue
    for (const [name, other] of summary) {
      if (name.startsWith("ours")) continue
      console.log(
        `${model} ${mine} / ${name}: wall ×${(ours.wall / other.wall).toFixed(2)}, CPU ×${(ours.cpu / other.cpu).toFixed(2)}, ` +
          `peak RSS ×${(ours.rss / other.rss).toFixed(2)}, WER ${(100 * (ours.wer - other.wer)).toFixed(1)} points`
      )
    }
  }
  if (peer === undefined && engines.includes("fw-batched")) console.log(`${model}: no faster-whisper batched figures (skipped)`)
  if (flag("profile")) {
    const prof = spawnSync(node, [...nodeFlags, path.join(root, "bench/asrProfile.ts"), model, rec.mp3], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    console.log(prof.stdout)
    // The same split for faster-whisper's batched pipeline, in its own process: where the two
    // engines differ (encoder against decoder) is what decides the next optimisation.
    const dir = fasterWhisperImportable() ? ct2ModelDir(model) : undefined
    if (dir !== undefined) {
      const out = path.join(cacheDir, `profile-${model}.txt`)
      const fw = spawnSync(PYTHON, ["bench/peers/faster_whisper_run.py", dir, rec.mp3, "batched", String(THREADS), out], {
        cwd: root, encoding: "utf8", env: { ...process.env, OMP_NUM_THREADS: String(THREADS), PROFILE: "1" }
      })
      console.log(fw.stderr.split("\n").filter((l) => l.startsWith("|") || l.startsWith("faster-whisper")).join("\n"))
      if (fs.existsSync(out)) {
        const e = wordErrors(rec.reference, fs.readFileSync(out, "utf8"))
        console.log(`WER ${((100 * e.errors) / e.words).toFixed(1)} % (${e.errors}/${e.words})`)
      }
    }
  }
}
