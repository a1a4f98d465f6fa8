import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type DownloadProgress, ModelRegistry, type ModelSpec, whisperModels } from "../../pipeline/models/ModelRegistry.ts"
import { modelsDir } from "../support/paths.ts"

// Port 9 (discard) on loopback is closed here: any download attempt fails fast.
const unreachable = "http://127.0.0.1:9"

describe("ModelRegistry", () => {
  it.effect("resolves a model whose files are on disk without touching the network", () =>
    Effect.gen(function*() {
      const registry = yield* ModelRegistry
      const model = yield* registry.resolve("whisper-tiny.en")
      expect(model.dir).toBe(path.join(modelsDir, "whisper-tiny.en"))
      expect(fs.statSync(model.file("onnx/encoder_model.onnx")).size).toBe(16491030)
      expect(() => model.file("onnx/not-a-file.onnx")).toThrow()
    }).pipe(Effect.provide(ModelRegistry.layer({ modelsDir, baseUrl: unreachable }))))

  it.effect("fails with a tagged download error naming file and URL when a model is missing and the server is unreachable", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-models-"))
    // One file already present: only the missing ones are fetched.
    const spec = whisperModels.find((m) => m.name === "whisper-tiny.en")!
    fs.mkdirSync(path.join(dir, spec.folder), { recursive: true })
    fs.copyFileSync(path.join(modelsDir, "whisper-tiny.en/config.json"), path.join(dir, spec.folder, "config.json"))
    return Effect.gen(function*() {
      const registry = yield* ModelRegistry
      const error = yield* Effect.flip(registry.resolve("whisper-tiny.en"))
      expect(error._tag).toBe("ModelDownloadError")
      if (error._tag === "ModelDownloadError") {
        expect(error.file).toBe("generation_config.json")
        expect(error.url).toBe(`${unreachable}/verbatim/whisper-tiny.en/resolve/main/generation_config.json`)
        expect(error.message).toMatch(/fetch failed|ECONNREFUSED/)
      }
      expect(fs.existsSync(path.join(dir, spec.folder, "generation_config.json.partial"))).toBe(false)
    }).pipe(
      Effect.provide(ModelRegistry.layer({ modelsDir: dir, baseUrl: unreachable })),
      Effect.ensuring(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
    )
  })

  it.effect("rejects unknown model names with the list of known ones", () =>
    Effect.gen(function*() {
      const registry = yield* ModelRegistry
      const error = yield* Effect.flip(registry.resolve("whisper-huge"))
      expect(error._tag).toBe("UnknownModelError")
      if (error._tag === "UnknownModelError") expect(error.known).toEqual(["whisper-tiny.en", "whisper-base"])
    }).pipe(Effect.provide(ModelRegistry.layer({ modelsDir, baseUrl: unreachable }))))
})

/** A local HF-style file server over shared/models: `/<repo>/resolve/main/<file>`. */
const serveModels = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ url: string; server: http.Server; requests: Array<string> }>((resolve) => {
      const requests: Array<string> = []
      const server = http.createServer((req, res) => {
        requests.push(req.url ?? "")
        const m = /^\/verbatim\/([^/]+)\/resolve\/main\/(.+)$/.exec(req.url ?? "")
        const file = m ? path.join(modelsDir, m[1]!, m[2]!) : ""
        if (!m || !fs.existsSync(file)) {
          res.writeHead(404).end()
          return
        }
        res.writeHead(200, { "content-length": fs.statSync(file).size })
        fs.createReadStream(file).pipe(res)
      })
      server.listen(0, "127.0.0.1", () =>
        resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests }))
    })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

const resolveSmall = Effect.gen(function*() {
  const registry = yield* ModelRegistry
  return yield* registry.resolve("tiny-configs")
})

const tinySpec = whisperModels.find((m) => m.name === "whisper-tiny.en")!
// Small files only, so the download path runs in milliseconds.
const smallSpec: ModelSpec = {
  ...tinySpec,
  name: "tiny-configs",
  folder: "tiny-configs",
  repo: "verbatim/whisper-tiny.en",
  files: tinySpec.files.filter((f) => f.file.endsWith(".json") && f.bytes < 5000)
}

describe("ModelRegistry downloads", () => {
  it.live("downloads missing files with progress, verifies sha256 and resolves offline afterwards", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-models-"))
    const progress: Array<DownloadProgress> = []
    return Effect.gen(function*() {
      const { url, requests } = yield* serveModels
      const layer = ModelRegistry.layer({ modelsDir: dir, baseUrl: url, models: [smallSpec], onProgress: (p) => progress.push(p) })
      const model = yield* resolveSmall.pipe(Effect.provide(layer))
      for (const f of smallSpec.files) {
        expect(fs.readFileSync(model.file(f.file))).toEqual(fs.readFileSync(path.join(modelsDir, "whisper-tiny.en", f.file)))
      }
      expect(requests.length).toBe(smallSpec.files.length)
      expect(progress.filter((p) => p.receivedBytes === p.totalBytes).map((p) => p.file).sort()).toEqual(
        smallSpec.files.map((f) => f.file).sort()
      )
      // Present now: a second registry resolves without any request.
      yield* resolveSmall.pipe(Effect.provide(layer))
      expect(requests.length).toBe(smallSpec.files.length)
    }).pipe(Effect.scoped, Effect.ensuring(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))))
  })

  it.live("concurrent first uses of a missing model download each file once", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-models-"))
    return Effect.gen(function*() {
      const { url, requests } = yield* serveModels
      const layer = ModelRegistry.layer({ modelsDir: dir, baseUrl: url, models: [smallSpec] })
      // One registry (as one process has), three jobs asking at once.
      const models = yield* Effect.gen(function*() {
        const registry = yield* ModelRegistry
        return yield* Effect.all([1, 2, 3].map(() => registry.resolve("tiny-configs")), { concurrency: "unbounded" })
      }).pipe(Effect.provide(layer))
      expect(models.length).toBe(3)
      expect(requests.length).toBe(smallSpec.files.length)
      for (const f of smallSpec.files) {
        expect(fs.readFileSync(models[2]!.file(f.file))).toEqual(fs.readFileSync(path.join(modelsDir, "whisper-tiny.en", f.file)))
      }
    }).pipe(Effect.scoped, Effect.ensuring(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))))
  })

  it.live("rejects a file whose sha256 does not match and leaves nothing behind", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-models-"))
    const wrong: ModelSpec = { ...smallSpec, files: [{ ...smallSpec.files[0]!, sha256: "0".repeat(64) }] }
    return Effect.gen(function*() {
      const { url } = yield* serveModels
      const error = yield* Effect.flip(
        resolveSmall.pipe(
          Effect.provide(ModelRegistry.layer({ modelsDir: dir, baseUrl: url, models: [wrong] }))
        )
      )
      expect(error._tag).toBe("ModelChecksumError")
      expect(fs.readdirSync(path.join(dir, "tiny-configs"))).toEqual([])
    }).pipe(Effect.scoped, Effect.ensuring(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))))
  })
})
