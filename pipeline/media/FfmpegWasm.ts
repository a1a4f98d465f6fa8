/**
 * Decoder backend on @ffmpeg/core 0.12.10 (single-threaded WASM build, GPL-2.0-or-later).
 *
 * One worker thread and one WASM instance per decode or probe (an instance is not re-entrant and
 * its heap only grows); the worker is terminated when the stream ends or is interrupted, which
 * frees the instance. The 32 MB module is compiled once per backend and shared with every worker.
 * See ffmpegWasmWorker.ts for how the input is read from disk and how backpressure works.
 *
 * Why not Effect's worker RPC, as the pipeline worker (pipeline/worker/PipelineRpc.ts): the whole
 * decode is one synchronous `exec` into WASM, during which the worker's event loop never runs, so
 * it could neither receive an RPC message nor send a stream element until ffmpeg returns. The PCM
 * chunks are posted from inside `exec` (a character device's write callback) and the reader's
 * acknowledgements come back through shared memory (Atomics), which no message protocol can
 * carry; cancelling is terminating the thread, safe here (no ONNX run in it).
 */
import { Cause, Effect, Schema, Stream } from "effect"
import * as fs from "node:fs/promises"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import { decodeFailure, type DecodeFailed, type NoAudio } from "./DecodeErrors.ts"
import type { WorkerInput, WorkerMessage } from "./ffmpegWasmWorker.ts"
import type { DecoderBackend, MediaProbe } from "./MediaBackend.ts"
import { Pcm16Reader } from "./Pcm16.ts"

const SAMPLE_RATE = 16_000

/** The .wasm next to the ESM build of @ffmpeg/core. */
const wasmPath = (): string => createRequire(import.meta.url).resolve("@ffmpeg/core/wasm")

/** Messages of one worker, consumed in order; pulling a chunk acknowledges it to the worker. */
class WorkerSession {
  private readonly inbox: Array<WorkerMessage> = []
  private waiter: ((message: WorkerMessage) => void) | undefined
  private finished = false
  private readonly worker: Worker
  private readonly control: Int32Array

  constructor(data: Omit<WorkerInput, "control">) {
    const shared = new SharedArrayBuffer(8)
    this.control = new Int32Array(shared)
    this.worker = new Worker(new URL("./ffmpegWasmWorker.ts", import.meta.url), {
      workerData: { ...data, control: shared } satisfies WorkerInput
    })
    this.worker.on("message", (message: WorkerMessage) => this.deliver(message))
    this.worker.on("error", (error) => this.deliver({ _tag: "failed", message: error.message }))
    this.worker.on("exit", (code) => this.deliver({ _tag: "failed", message: `ffmpeg worker exited (${code})` }))
  }

  private deliver(message: WorkerMessage) {
    if (this.finished) return
    if (message._tag !== "chunk") this.finished = true
    const waiter = this.waiter
    if (waiter) {
      this.waiter = undefined
      waiter(message)
    } else {
      this.inbox.push(message)
    }
  }

  next(): Promise<WorkerMessage> {
    const message = this.inbox.shift()
    const got = message ? Promise.resolve(message) : new Promise<WorkerMessage>((resolve) => (this.waiter = resolve))
    return got.then((m) => {
      if (m._tag === "chunk") {
        Atomics.sub(this.control, 0, 1)
        Atomics.notify(this.control, 0)
      }
      return m
    })
  }

  close(): Promise<void> {
    this.finished = true
    Atomics.store(this.control, 1, 1)
    Atomics.notify(this.control, 0)
    return this.worker.terminate().then(() => undefined)
  }
}

const ProbeOutput = Schema.fromJsonString(Schema.Struct({
  streams: Schema.optionalKey(Schema.Array(Schema.Struct({ codec_type: Schema.optionalKey(Schema.String) }))),
  format: Schema.optionalKey(Schema.Struct({ duration: Schema.optionalKey(Schema.String) }))
}))

/** ffprobe's `-of json` answer (same shape from the WASM and the native ffprobe). */
export const parseProbe = (json: string): MediaProbe => {
  const parsed = Schema.decodeUnknownOption(ProbeOutput)(json)
  if (parsed._tag === "None") return { durationSeconds: null, hasAudio: false }
  const duration = Number(parsed.value.format?.duration)
  return {
    durationSeconds: Number.isFinite(duration) && duration > 0 ? duration : null,
    hasAudio: (parsed.value.streams ?? []).some((s) => s.codec_type === "audio")
  }
}

export interface WasmOptions {
  /** Samples per emitted chunk are chunkSeconds × 16 000. */
  readonly chunkSeconds: number
  /** Chunks the worker may run ahead of the consumer before it blocks. */
  readonly maxInFlight: number
}

export const makeWasmBackend = Effect.fnUntraced(function*(options: WasmOptions) {
  const compiled = yield* Effect.cached(
    Effect.tryPromise(() => fs.readFile(wasmPath()).then((bytes) => WebAssembly.compile(bytes))).pipe(
      Effect.orDie,
      Effect.withSpan("FfmpegWasm.compile")
    )
  )

  const session = (inputPath: string, task: WorkerInput["task"]) =>
    Effect.acquireRelease(
      Effect.map(compiled, (wasmModule) =>
        new WorkerSession({
          wasmModule,
          inputPath,
          task,
          chunkBytes: Math.max(2, Math.round(options.chunkSeconds * SAMPLE_RATE)) * 2,
          maxInFlight: options.maxInFlight
        })),
      (s) => Effect.promise(() => s.close())
    )

  const decode = (path: string): Stream.Stream<Float32Array, NoAudio | DecodeFailed> =>
    Stream.unwrap(Effect.gen(function*() {
      const worker = yield* session(path, "decode")
      const reader = new Pcm16Reader()
      let decoded = 0
      const pull: Effect.Effect<readonly [Float32Array], NoAudio | DecodeFailed | Cause.Done> = Effect.promise(() =>
        worker.next()
      ).pipe(
        Effect.flatMap((message): Effect.Effect<readonly [Float32Array], NoAudio | DecodeFailed | Cause.Done> => {
          switch (message._tag) {
            case "chunk": {
              const samples = reader.push(new Uint8Array(message.data))
              decoded += samples.length
              return samples.length > 0 ? Effect.succeed([samples] as const) : pull
            }
            case "done": {
              const failure = decodeFailure(message.stderrTail, decoded, SAMPLE_RATE, message.ret === 0)
              return failure ? Effect.fail(failure) : Cause.done()
            }
            case "failed":
              return Effect.die(new Error(`ffmpeg wasm worker failed: ${message.message}`))
          }
        })
      )
      return Stream.fromPull(Effect.succeed(pull))
    }))

  const probe = (path: string): Effect.Effect<MediaProbe> =>
    Effect.scoped(Effect.gen(function*() {
      const worker = yield* session(path, "probe")
      const message = yield* Effect.promise(() => worker.next())
      if (message._tag === "failed") return yield* Effect.die(new Error(`ffprobe wasm worker failed: ${message.message}`))
      return parseProbe(message._tag === "done" ? message.stdout : "")
    }))

  return { name: "wasm", decode, probe } satisfies DecoderBackend
})
