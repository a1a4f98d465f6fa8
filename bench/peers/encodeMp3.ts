/**
 * WAV → mp3 (libmp3lame, 64 kb/s mono) with the service's own @ffmpeg/core build, so the
 * benchmark needs no system ffmpeg: `node bench/peers/encodeMp3.ts IN.wav OUT.mp3`.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import { captureLogs, loadCoreWithInput } from "../../pipeline/media/wasmCoreInWorker.ts"

const [input, output] = process.argv.slice(2) as [string, string]
const wasm = await WebAssembly.compile(fs.readFileSync(createRequire(import.meta.url).resolve("@ffmpeg/core/wasm")))
const { core, fd } = await loadCoreWithInput(wasm, input)
const logs = captureLogs(core, 20)
const ret = core.exec("-i", "/in/input", "-ac", "1", "-c:a", "libmp3lame", "-b:a", "64k", "/out.mp3")
fs.closeSync(fd)
if (ret !== 0) {
  console.error(logs.stderr.join("\n"))
  process.exit(1)
}
fs.writeFileSync(output, core.FS.readFile("/out.mp3"))
process.exit(0)
