import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { OnnxRuntime, Tensor } from "../../pipeline/onnx/OnnxRuntime.ts"
import { modelsDir } from "../support/paths.ts"

const encoder = path.join(modelsDir, "whisper-tiny.en/onnx/encoder_model_quantized.onnx")

describe("OnnxRuntime", () => {
  it.live("shares one session per path while held and unloads it after the idle time", () =>
    Effect.gen(function*() {
      const onnx = yield* OnnxRuntime
      const [a, b] = yield* Effect.scoped(Effect.all([onnx.session(encoder), onnx.session(encoder)]))
      expect(a).toBe(b)
      expect(a.inputNames).toEqual(["input_features"])
      // Released by its last holder: still cached within the idle time…
      const c = yield* Effect.scoped(onnx.session(encoder))
      expect(c).toBe(a)
      // …and loaded afresh once the idle time has passed.
      yield* Effect.sleep("300 millis")
      const d = yield* Effect.scoped(onnx.session(encoder))
      expect(d).not.toBe(a)
    }).pipe(Effect.provide(OnnxRuntime.layer({ threads: 1, idleUnloadMs: 100 }))))

  it.live("maps load and run failures to tagged errors", () =>
    Effect.gen(function*() {
      const onnx = yield* OnnxRuntime
      const loadError = yield* Effect.flip(Effect.scoped(onnx.session("/nonexistent/model.onnx")))
      expect(loadError._tag).toBe("OnnxLoadError")
      const runError = yield* Effect.scoped(
        Effect.flatMap(onnx.session(encoder), (s) =>
          Effect.flip(s.run({ input_features: new Tensor("float32", new Float32Array(10), [1, 1, 10]) })))
      )
      expect(runError._tag).toBe("OnnxRunError")
      expect(runError.path).toBe(encoder)
    }).pipe(Effect.provide(OnnxRuntime.layer({ threads: 1, idleUnloadMs: 1000 }))))
})
