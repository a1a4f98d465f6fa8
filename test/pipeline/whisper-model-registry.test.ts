import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ModelRegistry, whisperModels } from "../../pipeline/models/ModelRegistry.ts"
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
