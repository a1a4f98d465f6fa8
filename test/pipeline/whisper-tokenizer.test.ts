import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { makeTokenizer } from "../../pipeline/whisper/Tokenizer.ts"
import { modelsDir } from "../support/paths.ts"

const load = (model: string) =>
  makeTokenizer(
    JSON.parse(fs.readFileSync(path.join(modelsDir, model, "tokenizer.json"), "utf8")),
    JSON.parse(fs.readFileSync(path.join(modelsDir, model, "generation_config.json"), "utf8"))
  )
const fixture = JSON.parse(fs.readFileSync(path.join(modelsDir, "fixtures/a01_tokens.json"), "utf8"))

describe("Whisper tokenizer", () => {
  it("derives special ids from the files (tiny.en)", () => {
    const t = load("whisper-tiny.en")
    expect(t.special).toMatchObject({
      eot: 50256,
      sot: 50257,
      noSpeech: 50361,
      noTimestamps: 50362,
      timestampBegin: 50363,
      transcribe: 50358
    })
    expect(t.special.languages.size).toBe(0)
    expect(t.vocabSize).toBe(51864)
  })

  it("derives special ids and languages from the files (base)", () => {
    const t = load("whisper-base")
    expect(t.special).toMatchObject({
      eot: 50257,
      sot: 50258,
      noSpeech: 50362,
      noTimestamps: 50363,
      timestampBegin: 50364,
      transcribe: 50359
    })
    expect(t.special.languages.size).toBe(99)
    expect(t.special.languages.get("en")).toBe(50259)
    expect(t.tokenString(50364 + 350)).toBe("<|7.00|>")
  })

  for (const model of ["whisper-tiny.en", "whisper-base"]) {
    it(`decodes the fixture ids to the reference text (${model})`, () => {
      const t = load(model)
      const m = fixture.models[model]
      expect(t.decode(m.with_timestamps.tokens).trim()).toBe(m.with_timestamps.text)
      expect(t.decode(m.without_timestamps.tokens).trim()).toBe(m.without_timestamps.text)
      expect(t.decode(m.onnxruntime["encoder fp32 + decoder q8"].tokens).trim()).toBe(
        m.onnxruntime["encoder fp32 + decoder q8"].text
      )
    })
  }

  it("rebuilds multi-byte characters split across tokens", () => {
    const t = load("whisper-base")
    const ids: Array<number> = []
    // find tokens for the UTF-8 bytes of "é" (0xC3 0xA9) as single-byte tokens
    for (let id = 0; id < 256; id++) {
      const b = t.tokenBytes(id)
      if (b.length === 1 && (b[0] === 0xc3 || b[0] === 0xa9)) ids[b[0] === 0xc3 ? 0 : 1] = id
    }
    expect(t.decode(ids)).toBe("é")
  })
})
