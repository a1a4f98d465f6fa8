/**
 * End to end on a05: the real transcriber (whisper-tiny.en, word times) and the real diarizer
 * over the same VAD, then `assignSpeakers`. Checks that every word of each manifest turn lands
 * on one speaker, that turns alternate A, B, A, and that segments are split where a turn changes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { assignSpeakers } from "../../pipeline/diarize/AssignSpeakers.ts"
import { Diarizer } from "../../pipeline/diarize/Diarizer.ts"
import { diarizeAudio } from "../support/diarize.ts"
import { MediaDecoder } from "../../pipeline/media/MediaDecoder.ts"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import { ModelRegistry } from "../../pipeline/models/ModelRegistry.ts"
import { Transcriber } from "../../pipeline/Transcriber.ts"
import { TranscriberLive } from "../../pipeline/TranscriberLive.ts"
import { VoiceActivity } from "../../pipeline/vad/VoiceActivity.ts"
import { Whisper } from "../../pipeline/whisper/Whisper.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { readWavPcm16 } from "../support/wav.ts"

const file = path.join(mediaDir, "a05_dialogue_slt_kal.wav")
const manifest = JSON.parse(fs.readFileSync(path.join(mediaDir, "manifest.json"), "utf8")) as Record<
  string,
  { turns: Array<{ speaker: string; text: string }> }
>

const onnx = OnnxRuntime.layer({ threads: 2, idleUnloadMs: 10_000 })
const layers = Layer.mergeAll(
  TranscriberLive({ model: "whisper-tiny.en" }).pipe(
    Layer.provide(Whisper.layer({ defaultModel: "whisper-tiny.en" })),
    Layer.provide(ModelRegistry.layer({ modelsDir, baseUrl: "http://127.0.0.1:9" })),
    Layer.provide(MediaDecoder.layer({ backend: "wasm" }))
  ),
  Diarizer.layer({ modelsDir })
).pipe(Layer.provideMerge(VoiceActivity.layer()), Layer.provide(onnx))

const bare = (word: string) => word.toLowerCase().replace(/[^a-z']/g, "")

describe("assignSpeakers on a real transcript", () => {
  // Live clock: the transcriber and the ONNX session cache sleep on real time.
  it.live("a05: each manifest turn's words get one speaker, alternating, segments split at changes", () =>
      Effect.gen(function*() {
        const transcriber = yield* Transcriber
        const { transcript } = yield* transcriber.transcribe(
          { path: file, language: "en", wordTimestamps: true },
          () => Effect.void
        )
        const pcm = readWavPcm16(file).samples
        const summary = yield* (yield* VoiceActivity).detect(Stream.make(pcm))
        const turns = yield* diarizeAudio(pcm, summary.regions)
        const labelled = assignSpeakers(transcript, turns)

        assert.strictEqual(labelled.text, transcript.text)
        assert.strictEqual(labelled.segments.map((s) => s.text).join(" "), transcript.segments.map((s) => s.text).join(" "))
        // Every segment has one speaker and its words agree with it.
        for (const s of labelled.segments) {
          assert.isNotNull(s.speaker)
          for (const w of s.words ?? []) assert.strictEqual(w.speaker, s.speaker, `${w.text} in "${s.text}"`)
        }
        // Words in spoken order, matched to the manifest turns by their first and last words.
        const words = labelled.segments.flatMap((s) => s.words ?? [])
        const spoken = words.map((w) => bare(w.text))
        const turnSpeakers = manifest["a05_dialogue_slt_kal.wav"]!.turns.map((turn) => {
          const ref = turn.text.split(/\s+/).map(bare)
          const first = spoken.findIndex((w, i) => w === ref[0] && spoken[i + 1] === ref[1])
          assert.isAtLeast(first, 0, `turn "${turn.text}" not found in ${spoken.join(" ")}`)
          const own = words.slice(first, first + ref.length - 1)
          const speakers = new Set(own.map((w) => w.speaker))
          assert.strictEqual(speakers.size, 1, `${turn.text}: ${JSON.stringify(own)}`)
          return [...speakers][0]
        })
        assert.deepStrictEqual(turnSpeakers, ["SPEAKER_00", "SPEAKER_01", "SPEAKER_00"])
        // Consecutive segments of different speakers: a change sits between them, never inside.
        const changes = labelled.segments.filter((s, i) => i > 0 && s.speaker !== labelled.segments[i - 1]!.speaker)
        assert.strictEqual(changes.length, 2)
      }).pipe(Effect.provide(layers)), 120_000)
})
