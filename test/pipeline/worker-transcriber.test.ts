/**
 * The pipeline worker on real weights (whisper-tiny.en) and real media: the same transcript as
 * the in-process pipeline, progress across the boundary, typed errors and defects as values,
 * interruption that stops the work, crashes that fail one call and not the next, and an event
 * loop that stays responsive while a transcription runs (where the in-process pipeline stalls it).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Fiber, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { type ProgressReport, Transcriber } from "../../pipeline/Transcriber.ts"
import { localPipeline } from "../../pipeline/worker/LocalPipeline.ts"
import type { PipelineOptions } from "../../pipeline/worker/PipelineRpc.ts"
import { PipelineWorker } from "../../pipeline/worker/PipelineWorker.ts"
import { WorkerTranscriber } from "../../pipeline/worker/WorkerTranscriber.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { readWavPcm16, writeWav } from "../support/wav.ts"

const pipeline: PipelineOptions = {
  decoder: "wasm",
  modelsDir,
  modelsUrl: "http://127.0.0.1:9",
  model: "whisper-tiny.en",
  encoder: "fp32",
  threads: 2,
  idleUnloadMs: 60_000,
  reportDownloads: false,
  niceness: 10
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-worker-"))
const media = (file: string) => path.join(mediaDir, file)

/** ~2 minutes of speech: the shared clips back to back, long enough to watch the loop. */
const longFile = path.join(scratch, "long.wav")
{
  const clips = ["a08_interview_three_speakers.wav", "a05_dialogue_slt_kal.wav", "a04_ked_podcast.wav", "a02_kal_weather.wav"]
  const parts = [...clips, ...clips].map((file) => readWavPcm16(media(file)).samples)
  const joined = new Float32Array(parts.reduce((n, p) => n + p.length, 0))
  parts.reduce((offset, p) => (joined.set(p, offset), offset + p.length), 0)
  writeWav(longFile, joined)
}
/** Copies of a clip that the test worker (test/support/crashingPipelineWorker.ts) crashes on. */
const crashFile = (mode: "exit" | "throw" | "hang") => {
  const file = path.join(scratch, `crash-${mode}.wav`)
  if (!fs.existsSync(file)) fs.copyFileSync(media("a01_slt_budget.wav"), file)
  return file
}
const crashingWorker = new URL("../support/crashingPipelineWorker.ts", import.meta.url)

const workerLayer = (
  extra: {
    readonly idleExitMs?: number
    readonly cancelGraceMs?: number
    readonly retireGraceMs?: number
    readonly pipeline?: PipelineOptions
    readonly entry?: URL
  } = {}
) => WorkerTranscriber.pipe(Layer.provideMerge(PipelineWorker.layer({ pipeline, ...extra })))

const request = (file: string, wordTimestamps = true) => ({ path: file, language: "auto", wordTimestamps })
const ignore: ProgressReport = () => Effect.void

const transcribeWith = <E>(layer: Layer.Layer<Transcriber, E>, file: string) =>
  Effect.gen(function*() {
    const transcriber = yield* Transcriber
    return yield* transcriber.transcribe(request(file), ignore)
  }).pipe(Effect.provide(layer))

/** Max and p99 event-loop delay (ms) on this thread while `effect` runs. */
const loopDelayDuring = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const histogram = monitorEventLoopDelay({ resolution: 5 })
    histogram.enable()
    const value = yield* effect
    histogram.disable()
    return { value, p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 }
  })

/** Fraction of one core this process used over `ms` (every thread: main, workers, ONNX). */
/**
 * Time for the ONNX run in flight when a call is cancelled to end: a native run cannot be
 * stopped, and one encoder window or first decoder step takes up to ~1 s of a core when another
 * test file competes for the CPU (measured: one core busy for 0.5 s after the interrupt, idle
 * after 0.9 s). The job's remaining work is tens of seconds, so a 1.5 s window after this still
 * shows whether it was stopped.
 */
const IN_FLIGHT_RUN_MS = 1_200

const cpuShareOver = (ms: number) =>
  Effect.gen(function*() {
    const before = process.cpuUsage()
    yield* Effect.sleep(ms)
    const used = process.cpuUsage(before)
    return (used.user + used.system) / 1000 / ms
  })

// Measured here on 2 cores at load average 13 (other test runs): in-process p99 1622 ms, max 2.4 s
// (a decoder batch holds the loop); in the worker p99 36 ms, max 172 ms, all of it the OS
// scheduling this thread late. 100 ms leaves room for a busier machine and is still 16× short of
// the in-process figure.
const LOOP_P99_BOUND_MS = 100

describe("pipeline worker", () => {
  it.live("gives the in-process transcript, with progress, through the worker", () =>
    Effect.gen(function*() {
      const file = media("a05_dialogue_slt_kal.wav")
      const local = yield* transcribeWith(localPipeline(pipeline), file)
      const reports: Array<{ progress: number; durationSeconds?: number }> = []
      const remote = yield* Effect.gen(function*() {
        const transcriber = yield* Transcriber
        return yield* transcriber.transcribe(request(file), (progress, facts) =>
          Effect.sync(() => void reports.push({ progress, ...facts })))
      }).pipe(Effect.provide(workerLayer()))
      expect(remote).toEqual(local)
      expect(remote.transcript.segments.length).toBeGreaterThan(0)
      expect(remote.transcript.segments[0]!.words?.length).toBeGreaterThan(0)
      expect(reports[0]!.durationSeconds).toBeCloseTo(18.2, 1)
      expect(reports.length).toBeGreaterThan(1)
      expect(reports.map((r) => r.progress)).toEqual([...reports.map((r) => r.progress)].sort((a, b) => a - b))
    }))

  it.live("reports progress while it scans a long silence, before any speech reaches recognition", () =>
    Effect.gen(function*() {
      // 20 minutes of silence, then one clip: recognition can only report at the very end, so
      // every report below 95 % is the scan's own (what keeps a job's heartbeat alive).
      const file = path.join(scratch, "silence-then-speech.wav")
      const clip = readWavPcm16(media("a01_slt_budget.wav")).samples
      const samples = new Float32Array(20 * 60 * 16_000 + clip.length)
      samples.set(clip, 20 * 60 * 16_000)
      writeWav(file, samples)
      const reports: Array<number> = []
      const result = yield* Effect.gen(function*() {
        const transcriber = yield* Transcriber
        return yield* transcriber.transcribe(request(file, false), (progress) => Effect.sync(() => void reports.push(progress)))
      }).pipe(Effect.provide(localPipeline(pipeline)))
      fs.rmSync(file)
      expect(result.transcript.text.toLowerCase()).toContain("budget")
      expect(result.transcript.segments[0]!.start).toBeGreaterThan(20 * 60 - 1)
      // The scan reports once per second of its own work, so how many reports depends on the
      // machine: at least 2 where this test was written, 1 on an AVX-512 one (2026-11-27: the 20 minutes
      // decoded and scanned in under 2 s). Without the scan's reports there are none.
      const scanning = reports.filter((p) => p > 5 && p < 95)
      expect(scanning.length).toBeGreaterThanOrEqual(1)
      expect(reports).toEqual([...reports].sort((a, b) => a - b))
      expect(reports[reports.length - 1]).toBeGreaterThanOrEqual(95)
    }), 60_000)

  it.live("returns NoAudioInFile as a typed error and keeps the worker", () =>
    Effect.gen(function*() {
      const transcriber = yield* Transcriber
      const worker = yield* PipelineWorker
      const exit = yield* Effect.exit(transcriber.transcribe(request(media("x01_video_no_audio.mp4")), ignore))
      expect(exit._tag).toBe("Failure")
      const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
      expect(error?._tag === "Some" && error.value._tag).toBe("NoAudioInFile")
      const first = yield* worker.threadId
      expect(first).not.toBeNull()

      // A defect in the worker (a missing file) stays a defect, and the worker survives it.
      const missing = yield* Effect.exit(transcriber.transcribe(request(path.join(scratch, "nope.wav")), ignore))
      expect(Exit.isFailure(missing) && Cause.hasDies(missing.cause)).toBe(true)
      expect(Exit.isFailure(missing) && Cause.pretty(missing.cause)).toContain("no such file")
      expect(yield* worker.threadId).toBe(first)
    }).pipe(Effect.provide(workerLayer())))

  it.live("stops the work in the worker when the call is interrupted", () =>
    Effect.gen(function*() {
      const transcriber = yield* Transcriber
      const worker = yield* PipelineWorker
      let reports = 0
      const fiber = yield* Effect.forkChild(
        transcriber.transcribe(request(longFile), () => Effect.sync(() => void reports++))
      )
      while (reports < 2) yield* Effect.sleep(50)
      const thread = yield* worker.threadId
      const started = performance.now()
      yield* Fiber.interrupt(fiber)
      expect(performance.now() - started).toBeLessThan(5_000)
      // Cancelled cooperatively (the same worker), and nothing keeps computing afterwards.
      expect(yield* worker.threadId).toBe(thread)
      yield* Effect.sleep(IN_FLIGHT_RUN_MS)
      expect(yield* cpuShareOver(1_500)).toBeLessThan(0.3)
      const after = yield* transcriber.transcribe(request(media("a01_slt_budget.wav")), ignore)
      expect(after.transcript.text.length).toBeGreaterThan(0)
    }).pipe(Effect.provide(workerLayer())))

  it.live("cancels the work in the worker when onProgress fails (a run that lost its claim)", () =>
    Effect.gen(function*() {
      const transcriber = yield* Transcriber
      const worker = yield* PipelineWorker
      let reports = 0
      const exit = yield* Effect.exit(transcriber.transcribe(request(longFile), () =>
        ++reports < 2 ? Effect.void : Effect.die(new Error("run lost"))))
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
      expect(yield* worker.threadId).not.toBeNull()
      yield* Effect.sleep(IN_FLIGHT_RUN_MS)
      expect(yield* cpuShareOver(1_500)).toBeLessThan(0.3)
    }).pipe(Effect.provide(workerLayer())))

  it.live("ends an idle worker and starts a new one for the next call", () =>
    Effect.gen(function*() {
      const transcriber = yield* Transcriber
      const worker = yield* PipelineWorker
      expect(yield* worker.threadId).toBeNull()
      yield* transcriber.transcribe(request(media("a01_slt_budget.wav")), ignore)
      const first = yield* worker.threadId
      expect(first).not.toBeNull()

      // The worker's threads (its own, and onnxruntime's it created) run at lower priority; this one not.
      const nice = (task: string) => Number(fs.readFileSync(`/proc/self/task/${task}/stat`, "utf8").split(") ")[1]!.split(" ")[16])
      expect(nice(String(process.pid))).toBe(0)
      expect(fs.readdirSync("/proc/self/task").map(nice).filter((n) => n === 10).length).toBeGreaterThanOrEqual(2)

      yield* Effect.sleep(1_500)
      expect(yield* worker.threadId).toBeNull()
      const again = yield* transcriber.transcribe(request(media("a01_slt_budget.wav")), ignore)
      expect(again.transcript.text.toLowerCase()).toContain("budget")
      expect(yield* worker.threadId).not.toBe(first)
    }).pipe(Effect.provide(workerLayer({ idleExitMs: 500 }))))

  for (const mode of ["exit", "throw"] as const) {
    it.live(`fails the call with TranscriptionFailed when the worker dies (${mode}), then starts a new one`, () =>
      Effect.gen(function*() {
        const transcriber = yield* Transcriber
        const worker = yield* PipelineWorker
        const exit = yield* Effect.exit(transcriber.transcribe(request(crashFile(mode)), ignore))
        const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
        expect(error?._tag === "Some" && error.value._tag).toBe("TranscriptionFailed")
        expect(error?._tag === "Some" && error.value.reason).toMatch(mode === "exit" ? /exited \(code 70\)/ : /crashed: injected/)
        expect(yield* worker.threadId).toBeNull()

        const next = yield* transcriber.transcribe(request(media("a01_slt_budget.wav")), ignore)
        expect(next.transcript.text.toLowerCase()).toContain("budget")
        expect(yield* worker.threadId).not.toBeNull()
      }).pipe(Effect.provide(workerLayer({ entry: crashingWorker }))))
  }

  it.live("retires (finally terminates) a worker that does not stop when asked; the next call gets a new one", () =>
    Effect.gen(function*() {
      const transcriber = yield* Transcriber
      const worker = yield* PipelineWorker
      let reports = 0
      const fiber = yield* Effect.forkChild(transcriber.transcribe(request(crashFile("hang")), () => Effect.sync(() => void reports++)))
      while (reports < 1) yield* Effect.sleep(20)
      const started = performance.now()
      yield* Fiber.interrupt(fiber)
      const waited = performance.now() - started
      expect(waited).toBeGreaterThanOrEqual(900)
      expect(waited).toBeLessThan(5_000)
      expect(yield* worker.threadId).toBeNull()
      const next = yield* transcriber.transcribe(request(media("a01_slt_budget.wav")), ignore)
      expect(next.transcript.text.toLowerCase()).toContain("budget")
    }).pipe(Effect.provide(workerLayer({ entry: crashingWorker, cancelGraceMs: 1_000, retireGraceMs: 1_000 }))))

  // A regression guard: terminating the worker while it is inside a (synchronous) onnxruntime run
  // aborts the whole process, which here would end this test file with SIGABRT.
  it.live("shuts down mid-transcription by asking the worker to exit, and the caller gets TranscriptionFailed", () =>
    Effect.gen(function*() {
      // Several times, at different points of the work (decoder steps, encoder runs, VAD).
      for (const delayMs of [0, 150, 400]) {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(workerLayer(), scope)
        const transcriber = Context.get(context, Transcriber)
        let reports = 0
        const fiber = yield* Effect.forkDetach(transcriber.transcribe(request(longFile), () => Effect.sync(() => void reports++)))
        while (reports < 2) yield* Effect.sleep(20)
        yield* Effect.sleep(delayMs)
        const started = performance.now()
        yield* Scope.close(scope, Exit.void)
        expect(performance.now() - started).toBeLessThan(10_000)
        const exit = yield* Effect.exit(Fiber.join(fiber))
        const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
        expect(error?._tag === "Some" && error.value._tag).toBe("TranscriptionFailed")
        expect(error?._tag === "Some" && error.value.reason).toContain("shutting down")
      }
    }))

  it.live("fails with TranscriptionFailed when the worker cannot build its pipeline", () =>
    Effect.gen(function*() {
      const transcriber = yield* Transcriber
      // The worker starts on the first call with a copy of this thread's environment: a PATH of one
      // empty folder makes "native" unbuildable there whether or not this machine has an ffmpeg.
      const emptyDir = fs.mkdtempSync(path.join(scratch, "no-ffmpeg-"))
      const exit = yield* Effect.acquireUseRelease(
        Effect.sync(() => {
          const saved = process.env["PATH"]
          process.env["PATH"] = emptyDir
          return saved
        }),
        () => Effect.exit(transcriber.transcribe(request(media("a01_slt_budget.wav")), ignore)),
        (saved) => Effect.sync(() => void (process.env["PATH"] = saved))
      )
      const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
      expect(error?._tag === "Some" && error.value._tag).toBe("TranscriptionFailed")
      expect(error?._tag === "Some" && error.value.reason).toMatch(/could not start: .*no ffmpeg on PATH/)
    }).pipe(Effect.provide(workerLayer({ pipeline: { ...pipeline, decoder: "native" } }))))

  it.live("keeps this thread's event loop responsive while a transcription runs", () =>
    Effect.gen(function*() {
      const transcriber = yield* Transcriber
      // Load the models first, so the measured run is a steady-state transcription.
      yield* transcriber.transcribe(request(media("a01_slt_budget.wav")), ignore)
      const measured = yield* loopDelayDuring(transcriber.transcribe(request(longFile), ignore))
      console.log(`worker: event-loop delay p99 ${measured.p99.toFixed(1)} ms, max ${measured.max.toFixed(1)} ms`)
      expect(measured.value.transcript.segments.length).toBeGreaterThan(10)
      expect(measured.p99).toBeLessThan(LOOP_P99_BOUND_MS)
    }).pipe(Effect.provide(workerLayer())))

  it.live("(control) the in-process pipeline does stall the loop beyond that bound", () =>
    Effect.gen(function*() {
      const transcriber = yield* Transcriber
      yield* transcriber.transcribe(request(media("a01_slt_budget.wav")), ignore)
      const measured = yield* loopDelayDuring(transcriber.transcribe(request(longFile), ignore))
      console.log(`in-process: event-loop delay p99 ${measured.p99.toFixed(1)} ms, max ${measured.max.toFixed(1)} ms`)
      expect(measured.p99).toBeGreaterThan(LOOP_P99_BOUND_MS)
    }).pipe(Effect.provide(localPipeline(pipeline))))
})
