/**
 * Worker-thread entry that runs one @ffmpeg/core (WASM) instance for one task, then exits.
 *
 * Why a worker: `exec` is a synchronous call into WASM that lasts the whole decode; on the main
 * thread it would block the event loop (HTTP server, other jobs) for minutes on long files. In a
 * worker the decode can also block on backpressure (Atomics.wait) without blocking anyone.
 *
 * How the emscripten build is made to run in Node: it is compiled for browser workers
 * (ENVIRONMENT_IS_WORKER), so it reads `self.location.href` at load and its WORKERFS reads Blob
 * slices through `FileReaderSync`. Both are provided by wasmCoreInWorker.ts: `self` with a file URL, and a
 * FileReaderSync whose "blobs" are byte ranges of a file descriptor read with `fs.readSync`.
 * The input file is therefore mounted read-only at /in/input and read on demand from disk — it
 * is never copied into the WASM heap (MEMFS), so input size is not bounded by wasm memory.
 *
 * Output: ffmpeg writes s16le PCM to /out.pcm, a character device whose `write` hands each
 * buffer to JS. Bytes are gathered into fixed-size chunks and posted (transferred) to the parent.
 * At most `maxInFlight` chunks may be unacknowledged; beyond that the worker blocks in
 * Atomics.wait until the parent consumes one, so memory stays bounded however long the file.
 * Control array (Int32 over a SharedArrayBuffer): [0] chunks in flight, [1] cancel flag.
 *
 * Limits (honest): the 32-bit WASM heap holds ffmpeg's own buffers only, not the input or the
 * output, so 10-hour / multi-GB inputs stream with flat memory (measured: 2 h WAV through decode +
 * VAD + packing at a steady 340 MB RSS). Audio decoding is single-threaded but not the bottleneck
 * (measured on 30 min: mp3 ≈ 1600× real time, AAC ≈ 2000×, about native speed); each decode pays
 * ≈ 60 ms more than native for the worker and instance start. Reads go through synchronous
 * `fs.readSync` calls of the sizes ffmpeg asks for (32 KiB typically). The build is single-threaded
 * and has no network protocols: inputs must be local files.
 */
import * as fs from "node:fs"
import { parentPort, workerData } from "node:worker_threads"
import { inputOptions } from "./LargeWav.ts"
import { captureLogs, loadCoreWithInput } from "./wasmCoreInWorker.ts"

export interface WorkerInput {
  readonly wasmModule: WebAssembly.Module
  readonly inputPath: string
  readonly task: "decode" | "probe"
  readonly control: SharedArrayBuffer
  readonly chunkBytes: number
  readonly maxInFlight: number
}

export type WorkerMessage =
  | { readonly _tag: "chunk"; readonly data: ArrayBuffer }
  | { readonly _tag: "done"; readonly ret: number; readonly stderrTail: ReadonlyArray<string>; readonly stdout: string }
  | { readonly _tag: "failed"; readonly message: string }

const input = workerData as WorkerInput
const port = parentPort!
const control = new Int32Array(input.control)

const post = (message: WorkerMessage, transfer?: Array<ArrayBuffer>) => port.postMessage(message, transfer ?? [])

const run = async () => {
  const { core, fd } = await loadCoreWithInput(input.wasmModule, input.inputPath)
  const FS = core.FS

  const logs = captureLogs(core, 40)

  if (input.task === "probe") {
    core.ffprobe("-v", "error", "-show_entries", "format=duration:stream=codec_type", "-of", "json", "/in/input")
    post({ _tag: "done", ret: 0, stderrTail: logs.stderr, stdout: logs.stdout })
    return
  }

  let pending = new Uint8Array(input.chunkBytes)
  let filled = 0
  const flush = () => {
    if (filled === 0) return
    const data = filled === pending.length ? pending.buffer : pending.slice(0, filled).buffer
    Atomics.add(control, 0, 1)
    post({ _tag: "chunk", data }, [data])
    pending = new Uint8Array(input.chunkBytes)
    filled = 0
    for (;;) {
      const inFlight = Atomics.load(control, 0)
      if (inFlight < input.maxInFlight || Atomics.load(control, 1) !== 0) break
      Atomics.wait(control, 0, inFlight, 1000)
    }
  }
  const dev = FS.makedev(64, 0)
  FS.registerDevice(dev, {
    open: () => {},
    close: () => {},
    read: () => 0,
    llseek: () => 0,
    write: (_stream: unknown, buffer: Uint8Array, offset: number, length: number) => {
      if (Atomics.load(control, 1) !== 0) throw new Error("decode cancelled")
      let at = offset
      const end = offset + length
      while (at < end) {
        const n = Math.min(end - at, pending.length - filled)
        pending.set(buffer.subarray(at, at + n), filled)
        filled += n
        at += n
        if (filled === pending.length) flush()
      }
      return length
    }
  })
  FS.mkdev("/out.pcm", dev)

  const ret = core.exec(
    "-hide_banner",
    "-loglevel",
    "error",
    ...inputOptions(input.inputPath, "wasm"),
    "-i",
    "/in/input",
    "-vn",
    "-sn",
    "-dn",
    "-map",
    "0:a:0",
    "-ac",
    "1",
    "-ar",
    "16000",
    "-f",
    "s16le",
    "/out.pcm"
  )
  flush()
  fs.closeSync(fd)
  post({ _tag: "done", ret, stderrTail: logs.stderr, stdout: logs.stdout })
}

run().catch((cause: unknown) => {
  post({ _tag: "failed", message: cause instanceof Error ? cause.message : String(cause) })
})
