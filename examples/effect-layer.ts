/**
 * The same pipeline from Effect: provide `layer(options)` and use the `Verbatim` service.
 * Transcribes bytes held in memory (a buffer) with speaker labels, then renders WebVTT.
 *
 *   node examples/effect-layer.ts ../shared/media/a05_dialogue_slt_kal.wav
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import * as fs from "node:fs"
import { layer, Verbatim } from "verbatim"

const file = process.argv[2] ?? "../shared/media/a05_dialogue_slt_kal.wav"

const program = Effect.gen(function*() {
  const verbatim = yield* Verbatim
  const result = yield* verbatim.transcribe(fs.readFileSync(file), { filename: "dialogue.wav", diarize: true })
  for (const segment of result.transcript.segments) {
    console.log(`${segment.speaker ?? "?"} [${segment.start.toFixed(1)}–${segment.end.toFixed(1)}] ${segment.text}`)
  }
  const vtt = yield* verbatim.render(result.transcript, "vtt")
  console.log(new TextDecoder().decode(vtt.body))
})

// runMain keeps the process alive until the layer (and the pipeline's worker thread) is closed.
program.pipe(Effect.provide(layer({ model: "whisper-tiny.en" })), NodeRuntime.runMain)
