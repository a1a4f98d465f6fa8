/**
 * Worker-thread entry running one @ffmpeg/core (WASM) instance for one probe or render of a
 * clip, then exiting; the parent terminates the worker to cancel (the WASM call is
 * synchronous and cannot be interrupted from inside).
 *
 * Files: the source is mounted read-only at /in/input through WORKERFS, read on demand from
 * disk (see wasmCoreInWorker.ts; never copied whole into memory); the fonts and the caption script
 * are written to MEMFS (/fonts, /work/captions.ass), since the build has libass and freetype
 * but no system fonts; the mp4 is written to MEMFS (/out.mp4: `+faststart` rewrites the file,
 * so it must be seekable) and copied to `outputPath` on disk when ffmpeg returns. Progress is
 * ffmpeg's own `time=` stat lines, posted as they come.
 *
 * A plain `worker_threads` message port rather than Effect's worker RPC (PipelineRpc.ts): the
 * render is one synchronous WASM call during which the thread's event loop does not run, so the
 * worker could not answer RPC requests or interrupts; progress lines are posted from inside that
 * call, and cancelling is `terminate()` (safe: no ONNX run in this thread). Three message kinds.
 */
import * as fs from "node:fs"
import { parentPort, workerData } from "node:worker_threads"
import { captureLogs, loadCoreWithInput } from "../media/wasmCoreInWorker.ts"
import { progressSeconds } from "./RenderPlan.ts"

export interface RenderWorkerInput {
  readonly wasmModule: WebAssembly.Module
  readonly inputPath: string
  readonly task: "probe" | "render"
  readonly args: ReadonlyArray<string>
  readonly captions: string | undefined
  readonly fontFiles: ReadonlyArray<string>
  readonly outputPath: string
}

export type RenderWorkerMessage =
  | { readonly _tag: "progress"; readonly seconds: number }
  | { readonly _tag: "done"; readonly ret: number; readonly stderrTail: ReadonlyArray<string>; readonly stdout: string }
  | { readonly _tag: "failed"; readonly message: string }

const input = workerData as RenderWorkerInput
const port = parentPort!
const post = (message: RenderWorkerMessage) => port.postMessage(message)

const run = async () => {
  const { core, fd } = await loadCoreWithInput(input.wasmModule, input.inputPath)
  const FS = core.FS

  const logs = captureLogs(core, 30, (line) => {
    const seconds = progressSeconds(line)
    if (seconds === undefined) return false
    post({ _tag: "progress", seconds })
    return true
  })

  if (input.task === "probe") {
    const ret = core.ffprobe(...input.args)
    post({ _tag: "done", ret, stderrTail: logs.stderr, stdout: logs.stdout })
    return
  }
  FS.mkdir("/fonts")
  for (const file of input.fontFiles) FS.writeFile(`/fonts/${file.split("/").pop()}`, fs.readFileSync(file))
  FS.mkdir("/work")
  if (input.captions !== undefined) FS.writeFile("/work/captions.ass", input.captions)
  const ret = core.exec(...input.args)
  fs.closeSync(fd)
  if (ret === 0) fs.writeFileSync(input.outputPath, FS.readFile("/out.mp4"))
  post({ _tag: "done", ret, stderrTail: logs.stderr, stdout: logs.stdout })
}

run().catch((cause: unknown) => {
  post({ _tag: "failed", message: cause instanceof Error ? cause.message : String(cause) })
})
