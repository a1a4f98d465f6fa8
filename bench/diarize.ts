/**
 * Diarization benchmark: seconds of diarization per minute of audio and peak RSS.
 *
 *   npx node bench/diarize.ts                  a08 (63 s) and a ~10-minute concatenation
 *   npx node bench/diarize.ts --minutes 20     a longer concatenation
 *   npx node bench/diarize.ts --no-transcribe  skip the transcription figure
 *
 * Each recording runs in its own child process (`--child FILE`), so its peak RSS is its own:
 * the child reads the WAV, finds speech with the real VAD (timed apart: the transcription
 * pipeline runs the same VAD, so diarization's own cost is the second figure), then diarizes
 * (voice-encoder session load timed apart, on a 2 s warm-up). The concatenation cycles a08,
 * a05, a01, a02, a03, a04 with 0.6 s of silence between clips: 5 distinct voices (slt, kal, ked,
 * espeak en-us, espeak en-us+f3), and its DER counts a voice found in two clips as one speaker
 * (reference: a08's manifest turns, a05's measured turns, each single-voice clip from its first
 * to its last 10 ms frame above −40 dBFS). Beside a08, the wall time of `verbatim transcribe` on the same
 * file (the CLI's own "N s" figure: decode + VAD + whisper-base, model load excluded).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer, Stream } from "effect"
import { Diarizer } from "../pipeline/diarize/Diarizer.ts"
import { OnnxRuntime } from "../pipeline/onnx/OnnxRuntime.ts"
import { VoiceActivity } from "../pipeline/vad/VoiceActivity.ts"
import { diarizationErrorRate, type Turn } from "../test/support/der.ts"
import { mediaDir, modelsDir } from "../test/support/paths.ts"
import { readWavPcm16, writeWav } from "../test/support/wav.ts"

const SR = 16_000
const arg = (name: string) => {
  const i = process.argv.indexOf(name)
  return i < 0 ? undefined : process.argv[i + 1]
}

const readManifest = () =>
  JSON.parse(fs.readFileSync(path.join(mediaDir, "manifest.json"), "utf8")) as Record<
    string,
    { turns?: Array<{ speaker: string; start?: number; end?: number }> }
  >

interface ChildResult {
  readonly file: string
  readonly audioSeconds: number
  readonly speechSeconds: number
  readonly vadSeconds: number
  readonly loadSeconds: number
  readonly diarizeSeconds: number
  readonly speakers: number
  readonly turns: number
  readonly der: number | null
  readonly peakRssMb: number
}

const child = async (file: string): Promise<ChildResult> => {
  const pcm = readWavPcm16(file).samples
  const layers = Layer.mergeAll(Diarizer.layer({ modelsDir }), VoiceActivity.layer()).pipe(
    Layer.provide(OnnxRuntime.layer({ threads: 2, idleUnloadMs: 60_000 }))
  )
  const program = Effect.gen(function*() {
    const vad = yield* VoiceActivity
    let t = performance.now()
    const summary = yield* vad.detect(Stream.make(pcm))
    const vadSeconds = (performance.now() - t) / 1000
    t = performance.now()
    yield* Diarizer.use((diarizer) => diarizer.diarize(pcm, [{ start: 0, end: Math.min(2, pcm.length / SR) }]))
    const loadSeconds = (performance.now() - t) / 1000
    t = performance.now()
    const turns = yield* Diarizer.use((diarizer) => diarizer.diarize(pcm, summary.regions))
    const diarizeSeconds = (performance.now() - t) / 1000
    return { summary, turns, vadSeconds, loadSeconds, diarizeSeconds }
  })
  const { summary, turns, vadSeconds, loadSeconds, diarizeSeconds } = await Effect.runPromise(
    program.pipe(Effect.provide(layers))
  )
  const reference = fs.existsSync(`${file}.json`)
    ? JSON.parse(fs.readFileSync(`${file}.json`, "utf8")) as Array<Turn>
    : readManifest()[path.basename(file)]?.turns?.map((t) => ({ speaker: t.speaker, start: t.start!, end: t.end! }))
  const der = reference === undefined ? null : diarizationErrorRate(reference, turns, 0.25).der
  return {
    file: path.basename(file),
    audioSeconds: pcm.length / SR,
    speechSeconds: summary.regions.reduce((s, r) => s + r.end - r.start, 0),
    vadSeconds,
    loadSeconds,
    diarizeSeconds,
    speakers: new Set(turns.map((t) => t.speaker)).size,
    turns: turns.length,
    der,
    peakRssMb: process.resourceUsage().maxRSS / 1024
  }
}

/** Reference turns of one clip, by voice, in seconds from the clip's start. */
type ClipTurns = (samples: Float32Array) => Array<Turn>

/** The span between the first and last 10 ms frame above −40 dBFS: a single-voice clip's turn. */
const wholeClip = (voice: string): ClipTurns => (samples) => {
  const frame = SR / 100
  const loud: Array<number> = []
  for (let f = 0; (f + 1) * frame <= samples.length; f++) {
    let sum = 0
    for (let i = f * frame; i < (f + 1) * frame; i++) sum += samples[i]! * samples[i]!
    if (Math.sqrt(sum / frame) > 0.01) loud.push(f)
  }
  return loud.length === 0 ? [] : [{ speaker: voice, start: loud[0]! / 100, end: (loud[loud.length - 1]! + 1) / 100 }]
}

const a08Voices: Record<string, string> = { A: "slt", B: "kal", C: "espeak-f3" }

const longClips: ReadonlyArray<readonly [string, ClipTurns]> = [
  ["a08_interview_three_speakers.wav", () => readManifest()["a08_interview_three_speakers.wav"]!.turns!
    .map((t) => ({ speaker: a08Voices[t.speaker]!, start: t.start!, end: t.end! }))],
  // a05 has no times in the manifest: the turns measured in shared/models/README.md.
  ["a05_dialogue_slt_kal.wav", () => [
    { speaker: "slt", start: 0.23, end: 5.09 },
    { speaker: "kal", start: 6.02, end: 11.9 },
    { speaker: "slt", start: 13.15, end: 18.2 }
  ]],
  ["a01_slt_budget.wav", wholeClip("slt")],
  ["a02_kal_weather.wav", wholeClip("kal")],
  ["a03_espeak_library.wav", wholeClip("espeak-us")],
  ["a04_ked_podcast.wav", wholeClip("ked")]
]

/** Writes the concatenation and its reference turns (`<wav>.json`); returns the WAV path. */
const buildLong = (minutes: number): string => {
  const clips = longClips.map(([f, turns]) => {
    const samples = readWavPcm16(path.join(mediaDir, f)).samples
    return { samples, turns: turns(samples) }
  })
  const gap = Math.round(0.6 * SR)
  const parts: Array<Float32Array> = []
  const reference: Array<Turn> = []
  let total = 0
  for (let i = 0; total < minutes * 60 * SR; i++) {
    const clip = clips[i % clips.length]!
    for (const t of clip.turns) reference.push({ speaker: t.speaker, start: t.start + total / SR, end: t.end + total / SR })
    parts.push(clip.samples, new Float32Array(gap))
    total += clip.samples.length + gap
  }
  const out = new Float32Array(total)
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  const file = path.join(os.tmpdir(), `verbatim-diarize-bench-${minutes}min.wav`)
  writeWav(file, out)
  fs.writeFileSync(`${file}.json`, JSON.stringify(reference))
  return file
}

const runChild = (file: string): ChildResult => {
  const run = spawnSync(process.execPath, [...process.execArgv, import.meta.filename, "--child", file], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024
  })
  if (run.status !== 0) throw new Error(`child failed on ${file}: ${run.stderr}`)
  return JSON.parse(run.stdout.trim().split("\n").pop()!) as ChildResult
}

/** Wall seconds `verbatim transcribe` reports for its own run (model load excluded), or null. */
const transcriptionSeconds = (file: string): number | null => {
  const run = spawnSync("npm", ["run", "-s", "verbatim", "--", "transcribe", file], {
    cwd: path.resolve(import.meta.dirname, ".."),
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024
  })
  const match = /of audio, .*?, ([\d.]+) s \(/.exec(run.stderr)
  return match ? Number(match[1]) : null
}

const main = () => {
  const childFile = arg("--child")
  if (childFile !== undefined) {
    void child(childFile).then((r) => console.log(JSON.stringify(r)))
    return
  }
  const minutes = Number(arg("--minutes") ?? 10)
  const files = [path.join(mediaDir, "a08_interview_three_speakers.wav"), buildLong(minutes)]
  console.log(`diarization bench: ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}`)
  console.log("file | audio s | speech s | VAD s | encoder load s | diarize s | diarize s per audio min | speakers | turns | DER (0.25 s collar) | peak RSS MB")
  for (const file of files) {
    const r = runChild(file)
    console.log([
      r.file,
      r.audioSeconds.toFixed(1),
      r.speechSeconds.toFixed(1),
      r.vadSeconds.toFixed(2),
      r.loadSeconds.toFixed(2),
      r.diarizeSeconds.toFixed(2),
      (r.diarizeSeconds / (r.audioSeconds / 60)).toFixed(2),
      r.speakers,
      r.turns,
      r.der === null ? "-" : `${(r.der * 100).toFixed(1)} %`,
      r.peakRssMb.toFixed(0)
    ].join(" | "))
  }
  if (!process.argv.includes("--no-transcribe")) {
    const seconds = transcriptionSeconds(files[0]!)
    console.log(`transcription of ${path.basename(files[0]!)} (verbatim transcribe, whisper-base): ${seconds === null ? "failed" : `${seconds.toFixed(1)} s`}`)
  }
  fs.rmSync(files[1]!, { force: true })
  fs.rmSync(`${files[1]!}.json`, { force: true })
}

main()
