/**
 * A long recording end to end, as a user runs it: a WAV of `--hours` (default 10) built by
 * cycling the speech clips of shared/media with gaps of silence, written to disk as a stream
 * (1.15 GB for 10 hours), then `verbatim transcribe FILE --format json` as a whole process.
 * Prints wall time, real-time factor, the process's peak RSS (target < 2 GB) and whether any
 * placed clip came back without a transcript segment over it ("no window lost").
 *
 *   npx node bench/long.ts                         # 10 hours, whisper-tiny.en
 *   npx node bench/long.ts --hours 0.25 --model whisper-base
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { wavHeader } from "../pipeline/media/Wav.ts"
import { readWavPcm16 } from "../test/support/wav.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 ? process.argv[at + 1]! : fallback
}
const hours = Number(arg("hours", "10"))
const model = arg("model", "whisper-tiny.en")
const root = path.resolve(import.meta.dirname, "..")
const mediaDir = path.resolve(root, "../shared/media")
const rate = 16_000
const gapSeconds = 4

/** Streams a WAV of `hours` to `file`; returns where each clip was placed. */
const buildRecording = (file: string) => {
  const clips = fs.readdirSync(mediaDir).filter((name) => /^a0[1-7]_.*\.wav$/.test(name)).sort()
    .map((name) => ({ name, pcm: readWavPcm16(path.join(mediaDir, name)).samples }))
  const totalSamples = Math.floor(hours * 3600 * rate)
  const header = wavHeader({ sampleRate: rate, channels: 1, dataBytes: totalSamples * 2 })
  const fd = fs.openSync(file, "w")
  fs.writeSync(fd, header)
  const placed: Array<{ name: string; start: number; end: number }> = []
  const gap = Buffer.alloc(gapSeconds * rate * 2)
  let written = 0
  for (let i = 0; written < totalSamples; i++) {
    const clip = clips[i % clips.length]!
    const take = Math.min(clip.pcm.length, totalSamples - written)
    const bytes = Buffer.alloc(take * 2)
    for (let s = 0; s < take; s++) bytes.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(clip.pcm[s]! * 32767))), s * 2)
    fs.writeSync(fd, bytes)
    if (take === clip.pcm.length) placed.push({ name: clip.name, start: written / rate, end: (written + take) / rate })
    written += take
    const silence = Math.min(gap.length / 2, totalSamples - written)
    if (silence > 0) fs.writeSync(fd, gap, 0, silence * 2)
    written += silence
  }
  fs.closeSync(fd)
  return placed
}

const main = async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-bench-long-"))
  try {
    const file = path.join(work, "long.wav")
    const placed = buildRecording(file)
    const out = path.join(work, "long.json")
    const started = performance.now()
    let peakRss = 0
    const child = spawn(process.execPath, ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", "src/main.ts", "transcribe", file, "--format", "json", "--out", out], {
      cwd: root,
      env: { ...process.env, VERBATIM_MODEL: model },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr = (stderr + chunk.toString()).slice(-4_000)))
    // The whole process tree: the CLI's main thread and its pipeline worker share one pid.
    const sampler = setInterval(() => {
      try {
        const status = fs.readFileSync(`/proc/${child.pid}/status`, "utf8")
        peakRss = Math.max(peakRss, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024)
      } catch {
        // the process ended between samples
      }
    }, 250)
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    clearInterval(sampler)
    const seconds = (performance.now() - started) / 1000
    if (code !== 0) throw new Error(`transcribe exited ${code}: ${stderr}`)
    const transcript = JSON.parse(fs.readFileSync(out, "utf8")) as { segments: Array<{ start: number; end: number }> }
    const lost = placed.filter((clip) =>
      !transcript.segments.some((segment) => segment.end > clip.start + 0.2 && segment.start < clip.end - 0.2)
    )
    console.log(`${hours} h recording (${placed.length} clips placed), ${model}`)
    console.log(`wall ${seconds.toFixed(1)} s  (${((hours * 3600) / seconds).toFixed(1)}× real time)`)
    console.log(`peak RSS ${(peakRss / 1e9).toFixed(2)} GB  (target < 2 GB)`)
    console.log(`segments ${transcript.segments.length}; clips without a segment over them: ${lost.length}`)
    for (const clip of lost.slice(0, 10)) console.log(`  lost: ${clip.name} at ${clip.start.toFixed(1)}–${clip.end.toFixed(1)} s`)
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
