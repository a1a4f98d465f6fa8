import { Layer } from "effect"
import { ModelRegistry } from "../../pipeline/models/ModelRegistry.ts"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import { Whisper } from "../../pipeline/whisper/Whisper.ts"
import { modelsDir } from "./paths.ts"

/** Whisper over the shared read-only models; the base URL is never reached (files are present). */
export const whisperTestLayer = (defaultModel = "whisper-tiny.en") =>
  Whisper.layer({ defaultModel }).pipe(
    Layer.provide(OnnxRuntime.layer({ threads: 2, idleUnloadMs: 60_000 })),
    Layer.provide(ModelRegistry.layer({ modelsDir, baseUrl: "http://127.0.0.1:9" }))
  )
