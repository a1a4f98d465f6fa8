import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import { Embedder, EMBEDDING_DIMENSIONS, meanPoolNormalize, MINILM_FOLDER } from "../../search/Embedder.ts"
import { makeWordPiece, type WordPieceJson } from "../../search/WordPiece.ts"
import { modelsDir } from "../support/paths.ts"

interface FixtureItem {
  readonly text: string
  readonly input_ids: ReadonlyArray<number>
  readonly embedding: ReadonlyArray<number>
  readonly embedding_quantized: ReadonlyArray<number>
  readonly cos_quantized_vs_fp32: number
}
const fixture = JSON.parse(fs.readFileSync(path.join(modelsDir, "fixtures/minilm_reference.json"), "utf8")) as {
  readonly items: ReadonlyArray<FixtureItem>
}
const tokenizerJson = JSON.parse(
  fs.readFileSync(path.join(modelsDir, MINILM_FOLDER, "tokenizer.json"), "utf8")
) as WordPieceJson

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
  return s
}

const onnx = OnnxRuntime.layer({ threads: 1, idleUnloadMs: 5_000 })
const embedderLayer = Embedder.layer({ modelsDir }).pipe(Layer.provide(onnx))

describe("WordPiece", () => {
  const tokenizer = makeWordPiece(tokenizerJson)
  it("gives the reference ids for every fixture sentence", () => {
    for (const item of fixture.items) expect(Array.from(tokenizer.encode(item.text))).toEqual(item.input_ids)
  })
  it("truncates to 256 pieces with [SEP] last, and a word over 100 characters is [UNK]", () => {
    const ids = tokenizer.encode("word ".repeat(400))
    expect(ids.length).toBe(256)
    expect(ids[0]).toBe(101)
    expect(ids[255]).toBe(102)
    expect(Array.from(tokenizer.encode("a".repeat(101)))).toEqual([101, 100, 102])
    expect(Array.from(tokenizer.encode(""))).toEqual([101, 102])
  })
  it("splits CJK characters and drops control characters", () => {
    const cjk = Array.from(tokenizer.encode("东京"))
    expect(cjk.length).toBe(4)
    expect(Array.from(tokenizer.encode("a\u0000b\u200bc"))).toEqual(Array.from(tokenizer.encode("abc")))
  })
})

describe("meanPoolNormalize", () => {
  it("averages the token rows and scales to unit length", () => {
    const v = meanPoolNormalize(Float32Array.from([1, 0, 5, 8]), 2, 2)
    expect(v[0]).toBeCloseTo(0.6, 6)
    expect(v[1]).toBeCloseTo(0.8, 6)
    expect(Array.from(meanPoolNormalize(new Float32Array(4), 2, 2))).toEqual([0, 0])
  })
})

describe("Embedder", () => {
  // The fixture's int8 vectors come from another CPU: onnxruntime's integer kernels round
  // differently with and without VNNI (this machine has VNNI/AMX), so ours sit at cos
  // 0.976–0.994 from them. What must hold is that our int8 vectors are at least as close
  // to the fp32 reference as the fixture's own int8 vectors are (minus a small margin).
  it.live("is as close to the fp32 reference as the fixture's int8 vectors", () =>
    Effect.gen(function*() {
      const embedder = yield* Embedder
      const vectors = yield* embedder.embed(fixture.items.map((i) => i.text))
      expect(vectors.length).toBe(fixture.items.length)
      vectors.forEach((v, i) => {
        expect(v.length).toBe(EMBEDDING_DIMENSIONS)
        expect(dot(v, v)).toBeCloseTo(1, 5)
        const item = fixture.items[i]!
        expect(dot(v, item.embedding)).toBeGreaterThan(item.cos_quantized_vs_fp32 - 0.005)
        expect(dot(v, item.embedding_quantized)).toBeGreaterThan(0.97)
      })
    }).pipe(Effect.provide(embedderLayer)))

  it.live("embeds a text identically alone or among others, and nothing for no texts", () =>
    Effect.gen(function*() {
      const embedder = yield* Embedder
      const text = "The library closes at nine in the evening."
      const [alone] = yield* embedder.embed([text])
      const [, among] = yield* embedder.embed(["short", text, "a much longer text ".repeat(20)])
      expect(Array.from(among!)).toEqual(Array.from(alone!))
      expect(yield* embedder.embed([])).toEqual([])
    }).pipe(Effect.provide(embedderLayer)))

  it.live("ranks a paraphrased question closest to its passage", () =>
    Effect.gen(function*() {
      const embedder = yield* Embedder
      const [q, library, weather, budget] = yield* embedder.embed([
        "when does the library close",
        "The library closes at nine in the evening, and the reading room opens again at seven.",
        "Tomorrow will be windy with showers in the north.",
        "We will review the budget and decide on the new hiring plan."
      ])
      expect(dot(q!, library!)).toBeGreaterThan(dot(q!, weather!) + 0.2)
      expect(dot(q!, library!)).toBeGreaterThan(dot(q!, budget!) + 0.2)
    }).pipe(Effect.provide(embedderLayer)))

  it.live("fails the layer with EmbedderModelError when the model folder is missing", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.scoped(Layer.build(Embedder.layer({ modelsDir: "/nonexistent" }).pipe(Layer.provide(onnx))))
      )
      expect(error._tag).toBe("EmbedderModelError")
    }))

  it.live("fails the layer with OnnxLoadError when the graph is not a model", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "minilm-"))
      fs.mkdirSync(path.join(dir, MINILM_FOLDER, "onnx"), { recursive: true })
      fs.copyFileSync(path.join(modelsDir, MINILM_FOLDER, "tokenizer.json"), path.join(dir, MINILM_FOLDER, "tokenizer.json"))
      fs.writeFileSync(path.join(dir, MINILM_FOLDER, "onnx/model_quantized.onnx"), "not a model")
      const error = yield* Effect.flip(
        Effect.scoped(Layer.build(Embedder.layer({ modelsDir: dir }).pipe(Layer.provide(onnx))))
      )
      fs.rmSync(dir, { recursive: true, force: true })
      expect(error._tag).toBe("OnnxLoadError")
    }))
})
