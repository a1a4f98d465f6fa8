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

/** Installs the browser-worker globals, then instantiates the core from the parent's compiled module. */
export const loadCore = async <Core>(wasmModule: WebAssembly.Module): Promise<Core> => {
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
  const { default: createCore } = (await import(corePackage)) as { default: (opts: unknown) => Promise<Core> }
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
