/**
 * Clip render benchmark: seconds of rendering per second of clip, and peak RSS.
 *
 *   npx node bench/clips.ts                 4 s clips, every backend present (WASM always; native if on PATH)
 *   npx node bench/clips.ts --seconds 8     longer clips
 *
 * Cases: the mp4 sample (640×360 → blurred fill, karaoke captions) and a speech wav (waveform
 * background, title, line captions), each rendered to a 1080×1920 H.264 + AAC mp4 by
 * `ClipRenderer` with the backend forced. Each case runs in its own child process so its peak
 * RSS (the WASM worker thread included) is its own; a native ffmpeg's RSS and CPU are its own
 * process's and are not counted. Time includes the probe and the worker's WASM instantiation.
 * CPU seconds (this process, all threads) tell the cost apart from the load of a shared machine.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { nativeFfmpegAvailable } from "../pipeline/media/FfmpegNative.ts"
import { ClipRenderer } from "../pipeline/render/ClipRenderer.ts"

const mediaDir = path.resolve(import.meta.dirname, "../../shared/media")
const argValue = (name: string) => process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined

const cases = {
  video: { file: "f05_podcast_video.mp4", start: 1, style: "karaoke" as const },
  audio: { file: "a04_ked_podcast.wav", start: 0.5, style: "line" as const }
}
type CaseName = keyof typeof cases

const words = (seconds: number) =>
  Array.from({ length: Math.floor(seconds / 0.4) }, (_, i) => ({ start: i * 0.4, end: i * 0.4 + 0.35, text: `word${i}` }))

const child = async (backend: "wasm" | "native", name: CaseName, seconds: number) => {
  const spec = cases[name]
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-clip-")), "clip.mp4")
  const started = performance.now()
  await Effect.runPromise(Effect.gen(function*() {
    const renderer = yield* ClipRenderer
    yield* renderer.render({
      inputPath: path.join(mediaDir, spec.file),
      outputPath: out,
      startSeconds: spec.start,
      durationSeconds: seconds,
      style: spec.style,
      words: words(seconds),
      title: "Bench episode"
    }, () => Effect.void)
  }).pipe(Effect.provide(ClipRenderer.layer({ backend }))))
  const wall = (performance.now() - started) / 1000
  const usage = process.resourceUsage()
  const cpu = (usage.userCPUTime + usage.systemCPUTime) / 1e6
  const result = { wall, cpu, bytes: fs.statSync(out).size, peakRssMb: usage.maxRSS / 1024 }
  fs.rmSync(path.dirname(out), { recursive: true, force: true })
  process.stdout.write(JSON.stringify(result) + "\n")
}

const main = () => {
  const seconds = Number(argValue("--seconds") ?? 4)
  const backends: Array<"wasm" | "native"> = nativeFfmpegAvailable() ? ["native", "wasm"] : ["wasm"]
  if (backends.length === 1) console.log("native ffmpeg: not on PATH (skipped)")
  console.log(`clip length ${seconds} s, output 1080x1920 H.264 + AAC, ${os.cpus().length} cores (shared)\n`)
  console.log("backend  case    render s  s per clip s  CPU s per clip s  peak RSS MB  size kB")
  for (const backend of backends) {
    for (const name of Object.keys(cases) as Array<CaseName>) {
      const run = spawnSync(process.execPath, [
        "--experimental-strip-types",
        "--disable-warning=ExperimentalWarning",
        import.meta.filename,
        "--child",
        backend,
        name,
        String(seconds)
      ], { encoding: "utf8", timeout: 110_000 })
      const line = run.stdout.trim().split("\n").pop() ?? ""
      if (run.status !== 0 || !line.startsWith("{")) {
        console.log(`${backend.padEnd(8)} ${name.padEnd(7)} failed: ${(run.stderr || run.error?.message || "").trim().slice(-300)}`)
        continue
      }
      const r = JSON.parse(line) as { wall: number; cpu: number; bytes: number; peakRssMb: number }
      console.log(
        `${backend.padEnd(8)} ${name.padEnd(7)} ${r.wall.toFixed(1).padStart(8)}  ${(r.wall / seconds).toFixed(2).padStart(12)}  ` +
          `${(r.cpu / seconds).toFixed(2).padStart(16)}  ${r.peakRssMb.toFixed(0).padStart(11)}  ${(r.bytes / 1024).toFixed(0).padStart(7)}`
      )
    }
  }
}

if (process.argv.includes("--child")) {
  const at = process.argv.indexOf("--child")
  await child(process.argv[at + 1] as "wasm" | "native", process.argv[at + 2] as CaseName, Number(process.argv[at + 3]))
} else {
  main()
}
