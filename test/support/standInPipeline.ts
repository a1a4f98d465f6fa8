/**
 * A stand-in speech pipeline for HTTP tests of the job system.
 *
 * Why a stand-in: those tests are about the job lifecycle (submit paths, queueing, progress,
 * cancellation, stalls, webhooks, limits), not about recognition. The real Transcriber takes
 * seconds per file and loads ONNX models; a stand-in whose timing and outcome the test
 * chooses makes queueing and interruption deterministic and keeps the suite fast. The
 * MediaDecoder stays REAL (WASM backend): the submit paths use its probe to refuse
 * recordings over 10 hours, which is part of what these tests check.
 *
 * Behaviour per file: a file may carry a directive, the text `VBSTANDIN<json>VBEND` in its
 * first 64 KiB (in a WAV: an unknown RIFF chunk, which decoders skip). Without one the
 * `defaults` below apply. The run then reports progress in `steps` steps over `delayMs`
 * (each report carries `durationSeconds`, so every one reaches the job row as a heartbeat;
 * a deleted job's run is interrupted at the next one), optionally hangs first without any
 * report for `hangMs`, then returns a small fixed transcript or fails as asked.
 *
 * Runs are recorded per job id (taken from the storage path, which contains it).
 */
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import { MediaDecoder } from "../../pipeline/media/MediaDecoder.ts"
import { NoAudioInFile, Transcriber, TranscriptionFailed } from "../../pipeline/Transcriber.ts"
import type { Configuration } from "../../services/config/Configuration.ts"

export interface StandInDirective {
  /** Total time spent "transcribing" (default from `defaults`). */
  readonly delayMs?: number
  /** Progress reports spread over `delayMs`. */
  readonly steps?: number
  /** Silence before the first report: no heartbeat at all for this long. */
  readonly hangMs?: number
  /** `error`: an engine failure; `corrupt`: the file's audio breaks the decoder part-way. */
  readonly fail?: "noaudio" | "error" | "corrupt"
  /** Transcript text (one segment). */
  readonly text?: string
  /** `speech_detected: false`, empty segments. */
  readonly silent?: boolean
  /** Kills the whole process (SIGKILL) after the first progress report: a run that crashes it every time. */
  readonly crash?: boolean
}

/** `interrupted`: the run stopped early (interrupted, or its heartbeat found the job gone). */
export type RunEvent = "started" | "done" | "failed" | "interrupted"

export interface StandIn {
  readonly layer: Layer.Layer<Transcriber | MediaDecoder, never, Configuration>
  /** Applies to files without a directive; tests may change it. */
  readonly defaults: { delayMs: number; steps: number }
  /** Events of each job's runs, in order. */
  readonly runs: Map<string, Array<RunEvent>>
  /** Progress values reported per job. */
  readonly progress: Map<string, Array<number>>
}

const marker = "VBSTANDIN"
const endMarker = "VBEND"
const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/

export const standInText = "The quarterly budget meeting is on Tuesday."

/** The directive as bytes, to embed in any file. */
export const directiveBytes = (directive: StandInDirective): Uint8Array =>
  new TextEncoder().encode(`${marker}${JSON.stringify(directive)}${endMarker}`)

const readDirective = (path: string): StandInDirective | undefined => {
  const fd = fs.openSync(path, "r")
  try {
    const head = Buffer.alloc(64 * 1024)
    const n = fs.readSync(fd, head, 0, head.length, 0)
    const text = head.subarray(0, n).toString("latin1")
    const start = text.indexOf(marker)
    if (start < 0) return undefined
    const end = text.indexOf(endMarker, start)
    return end < 0 ? undefined : JSON.parse(text.slice(start + marker.length, end)) as StandInDirective
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * A valid 16 kHz mono PCM16 WAV of `seconds` (a quiet tone), with the directive in a RIFF
 * chunk of its own before `data` when given.
 */
export const tinyWav = (directive?: StandInDirective, seconds = 0.5): Uint8Array => {
  const samples = Math.round(16_000 * seconds)
  const extra = directive === undefined ? new Uint8Array(0) : directiveBytes(directive)
  const extraChunk = extra.length === 0 ? 0 : 8 + extra.length + (extra.length & 1)
  const out = Buffer.alloc(44 + extraChunk + samples * 2)
  out.write("RIFF", 0, "ascii")
  out.writeUInt32LE(out.length - 8, 4)
  out.write("WAVE", 8, "ascii")
  out.write("fmt ", 12, "ascii")
  out.writeUInt32LE(16, 16)
  out.writeUInt16LE(1, 20)
  out.writeUInt16LE(1, 22)
  out.writeUInt32LE(16_000, 24)
  out.writeUInt32LE(32_000, 28)
  out.writeUInt16LE(2, 32)
  out.writeUInt16LE(16, 34)
  let at = 36
  if (extra.length > 0) {
    out.write("vbst", at, "ascii")
    out.writeUInt32LE(extra.length, at + 4)
    out.set(extra, at + 8)
    at += extraChunk
  }
  out.write("data", at, "ascii")
  out.writeUInt32LE(samples * 2, at + 4)
  for (let i = 0; i < samples; i++) {
    out.writeInt16LE(Math.round(800 * Math.sin((2 * Math.PI * 440 * i) / 16_000)), at + 8 + 2 * i)
  }
  return new Uint8Array(out.buffer, out.byteOffset, out.length)
}

export const makeStandIn = (defaults: { delayMs: number; steps: number } = { delayMs: 300, steps: 3 }): StandIn => {
  const runs = new Map<string, Array<RunEvent>>()
  const progress = new Map<string, Array<number>>()
  const record = (jobId: string, event: RunEvent) => {
    const list = runs.get(jobId) ?? []
    list.push(event)
    runs.set(jobId, list)
  }
  const state = { delayMs: defaults.delayMs, steps: defaults.steps }

  const transcriber = Layer.succeed(Transcriber, Transcriber.of({
    transcribe: (request, onProgress) => {
      const jobId = uuid.exec(request.path)?.[0] ?? request.path
      return Effect.gen(function*() {
        record(jobId, "started")
        const directive = readDirective(request.path) ?? {}
        const delayMs = directive.delayMs ?? state.delayMs
        const steps = Math.max(1, directive.steps ?? state.steps)
        const duration = 0.5
        if (directive.hangMs !== undefined) yield* Effect.sleep(directive.hangMs)
        for (let step = 1; step <= steps; step++) {
          yield* Effect.sleep(delayMs / steps)
          const value = Math.round((90 * step) / steps)
          progress.set(jobId, [...(progress.get(jobId) ?? []), value])
          yield* onProgress(value, { durationSeconds: duration })
          if (directive.crash === true) process.kill(process.pid, "SIGKILL")
        }
        if (directive.fail === "noaudio") {
          record(jobId, "failed")
          return yield* new NoAudioInFile({ reason: "the stand-in was told the file has no audio stream" })
        }
        if (directive.fail === "error") {
          record(jobId, "failed")
          return yield* new TranscriptionFailed({ reason: "the stand-in was told to fail", kind: "engine" })
        }
        if (directive.fail === "corrupt") {
          record(jobId, "failed")
          return yield* new TranscriptionFailed({ reason: "decoding failed: the stand-in was told the file breaks off", kind: "media" })
        }
        record(jobId, "done")
        const text = directive.text ?? standInText
        const silent = directive.silent === true
        return {
          transcript: {
            text: silent ? "" : text,
            language: "en",
            duration,
            speech_detected: !silent,
            segments: silent ? [] : [{ start: 0, end: duration, text, speaker: null }]
          },
          durationSeconds: duration,
          language: "en",
          speechDetected: !silent,
          speechRatio: silent ? 0 : 0.8
        }
      }).pipe(
        // Interrupted, or stopped by a heartbeat that found the job gone (a defect by design).
        Effect.onExit((exit) =>
          Effect.sync(() => {
            const last = runs.get(jobId)?.at(-1)
            if (exit._tag === "Failure" && last === "started") record(jobId, "interrupted")
          })
        )
      )
    }
  }))

  return {
    layer: Layer.merge(transcriber, MediaDecoder.layer({ backend: "wasm" })),
    defaults: state,
    runs,
    progress
  }
}
