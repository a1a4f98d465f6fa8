/**
 * Word times on demand: the edit-distance matching of transcript words to recognised words
 * (corrections and misrecognitions leave words unmatched, which keep their estimates), and
 * the real thing — a01 transcribed without word times, then a stretch aligned by the real
 * pipeline (whisper-tiny.en, WASM decoder): the words get times from recognition that agree
 * with a full word-timestamp transcription of the file, not the per-phrase estimate.
 */
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { InProcessPipelineLayer } from "../../layers/Pipeline.ts"
import { Transcriber } from "../../pipeline/Transcriber.ts"
import { clipWords } from "../../services/clips/ClipWords.ts"
import { alignTimes, matchWords, WordAlignment } from "../../services/clips/WordAlignment.ts"
import { SpeechConfig } from "../../services/config/SpeechConfig.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { modelsDir } from "../support/paths.ts"

describe("matching words", () => {
  it("pairs equal words in order across insertions, deletions and substitutions", () => {
    expect(matchWords(["good", "morning", "everyone", "today"], ["good", "mourning", "everyone", "um", "today"]))
      .toEqual([[0, 0], [2, 2], [3, 4]])
    expect(matchWords([], ["a"])).toEqual([])
    // Two swapped words cost two edits whichever way; at most one can be kept.
    expect(matchWords(["a", "b"], ["b", "a"]).length).toBeLessThanOrEqual(1)
  })

  it("moves matched words to the recognised times and leaves the others", () => {
    const estimated = [
      { start: 0, end: 0.3, text: "Good" },
      { start: 0.4, end: 0.9, text: "morning," },
      { start: 1, end: 1.5, text: "team." }
    ]
    const recognised = [{ start: 0.2, end: 0.5, text: " good" }, { start: 0.6, end: 1.1, text: "Morning" }]
    const { words, matched } = alignTimes(estimated, recognised)
    expect(matched).toBe(2)
    expect(words).toEqual([
      { start: 0.2, end: 0.5, text: "Good" },
      { start: 0.6, end: 1.1, text: "morning," },
      { start: 1, end: 1.5, text: "team." }
    ])
  })
})

describe("aligning a finished job's words on demand (real pipeline)", () => {
  const file = "/work/shared/media/a01_slt_budget.wav"
  const config = SpeechConfig.layerWith({ modelsDir, model: "whisper-tiny.en", decoder: "wasm", threads: 1 })
  const pipeline = InProcessPipelineLayer.pipe(Layer.provide(config))
  const layer = Layer.mergeAll(WordAlignment.layer, pipeline).pipe(Layer.provide(pipeline))
  let plain: Transcript
  let reference: Transcript

  const run = <A, E>(effect: Effect.Effect<A, E, WordAlignment | Transcriber>) => Effect.runPromise(Effect.provide(effect, layer))

  beforeAll(async () => {
    ;[plain, reference] = await run(Effect.gen(function*() {
      const transcriber = yield* Transcriber
      const once = (wordTimestamps: boolean) =>
        Effect.map(transcriber.transcribe({ path: file, language: "en", wordTimestamps }, () => Effect.void), (r) => r.transcript)
      return [yield* once(false), yield* once(true)] as const
    }))
  }, 240_000)
  afterAll(() => undefined)

  it("times the clip's words from recognition, close to a word-timestamp transcription", async () => {
    expect(plain.segments.every((segment) => segment.words === undefined)).toBe(true)
    const start = 1
    const end = 5
    const result = await run(Effect.gen(function*() {
      return yield* (yield* WordAlignment).clipWords(file, plain, start, end)
    }))
    expect(result.source).toBe("aligned")
    const expected = clipWords(reference, start, end)
    const key = (text: string) => text.toLowerCase().replace(/\W/g, "")
    const once = (words: ReadonlyArray<{ text: string }>, text: string) => words.filter((w) => key(w.text) === key(text)).length === 1
    let compared = 0
    for (const word of result.words) {
      // Words that occur once on both sides name the same spoken word.
      if (!once(result.words, word.text) || !once(expected, word.text)) continue
      const twin = expected.find((w) => key(w.text) === key(word.text))!
      compared++
      expect(Math.abs(twin.start - word.start), word.text).toBeLessThan(0.35)
    }
    expect(compared).toBeGreaterThanOrEqual(3)
    for (const word of result.words) {
      expect(word.start).toBeGreaterThanOrEqual(0)
      expect(word.end).toBeLessThanOrEqual(end - start)
    }
  }, 240_000)

  it("keeps stored word times as they are", async () => {
    const result = await run(Effect.gen(function*() {
      return yield* (yield* WordAlignment).clipWords(file, reference, 1, 5)
    }))
    expect(result.source).toBe("stored")
    expect(result.words).toEqual(clipWords(reference, 1, 5))
  })
})
