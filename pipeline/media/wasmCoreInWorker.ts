/**
 * Running the @ffmpeg/core emscripten build inside a Node worker thread, shared by the
 * decoder worker and the clip render worker.
 *
 * The build is compiled for browser workers: it reads `self.location.href` at load, and its
 * WORKERFS reads Blob slices through `FileReaderSync`. Both are provided here: `self` with a
 * file URL, and a FileReaderSync whose "blobs" are byte ranges of a file descriptor read with
 * `fs.readSync` — so an input mounted through WORKERFS is read on demand from disk and never
 * copied into the WASM heap. The module is compiled once by the parent and instantiated here.
 */
import * as fs from "node:fs"

/** A byte range of an open file, standing in for a Blob slice. */
export interface FileRange {
  readonly fd: number
  readonly start: number
  readonly size: number
}

/** The open file `fd` as a WORKERFS blob. */
export const fileBlob = (fd: number) => {
  const size = fs.fstatSync(fd).size
  return {
    size,
    slice: (start: number, end: number): FileRange => ({ fd, start, size: Math.max(0, Math.min(end, size) - start) })
  }
}

/** The parts of the emscripten module the workers use (untyped upstream). */
export interface FfmpegCore {
  readonly FS: {
    mkdir(path: string): void
    mount(type: unknown, opts: unknown, mountpoint: string): void
    writeFile(path: string, data: Uint8Array | string): void
    readFile(path: string): Uint8Array
    makedev(major: number, minor: number): number
    registerDevice(dev: number, ops: unknown): void
    mkdev(path: string, dev: number): void
    readonly filesystems: { readonly WORKERFS: unknown }
  }
  setLogger(logger: (log: { type: string; message: string }) => void): void
  exec(...args: Array<string>): number
  ffprobe(...args: Array<string>): number
}

/**
 * What the core prints: all of stdout (ffprobe's JSON) and the last `tail` stderr lines (for
 * the error sentence). `intercept` may claim a stderr line (a progress report) instead.
 */
export const captureLogs = (core: FfmpegCore, tail: number, intercept?: (line: string) => boolean) => {
  const logs = { stderr: [] as Array<string>, stdout: "" }
  core.setLogger((log) => {
    if (log.type === "stdout") {
      logs.stdout += log.message + "\n"
      return
    }
    if (intercept?.(log.message) === true) return
    logs.stderr.push(log.message)
    if (logs.stderr.length > tail) logs.stderr.shift()
  })
  return logs
}

/** A core with `inputPath` mounted read-only at /in/input; `fd` is the open input. */
export const loadCoreWithInput = async (wasmModule: WebAssembly.Module, inputPath: string) => {
  const fd = fs.openSync(inputPath, "r")
  const blob = fileBlob(fd)
  const core = await loadCore(wasmModule)
  core.FS.mkdir("/in")
  core.FS.mount(core.FS.filesystems.WORKERFS, { blobs: [{ name: "input", data: blob }] }, "/in")
  return { core, fd }
}

/** Installs the browser-worker globals, then instantiates the core from the parent's compiled module. */
export const loadCore = async (wasmModule: WebAssembly.Module): Promise<FfmpegCore> => {
  Object.assign(globalThis, {
    self: { location: { href: import.meta.url } },
    FileReaderSync: class {
      readAsArrayBuffer(range: FileRange): ArrayBuffer {
        const bytes = new Uint8Array(range.size)
        let read = 0
        while (read < range.size) {
          const n = fs.readSync(range.fd, bytes, read, range.size - read, range.start + read)
          if (n === 0) break
          read += n
        }
        return bytes.buffer
      }
    }
  })
  // The package ships no types; the specifier is a variable so TypeScript does not look for them.
  const corePackage = "@ffmpeg/core"
  const { default: createCore } = (await import(corePackage)) as { default: (opts: unknown) => Promise<FfmpegCore> }
  return createCore({
    instantiateWasm: (
      imports: WebAssembly.Imports,
      receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void
    ) => {
      void WebAssembly.instantiate(wasmModule, imports).then((instance) => receive(instance, wasmModule))
      return {}
    }
  })
}
