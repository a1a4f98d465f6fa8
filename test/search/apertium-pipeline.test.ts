/** The rewriting of an Apertium mode file and the stream format of questions and answers (pure). */
import { describe, expect, it } from "vitest"
import { modeName, nullFlushPipeline, streamAnswer, streamRequest } from "../../search/ApertiumPipeline.ts"

describe("Apertium pipeline", () => {
  it("names a direction's mode file by ISO 639-3 codes, and none for a language it does not map", () => {
    expect(modeName("es", "en")).toBe("spa-eng.mode")
    expect(modeName("en", "es")).toBe("eng-spa.mode")
    expect(modeName("fr", "en")).toBeUndefined()
  })

  it("makes every stage flush on NUL, unbuffered, with the generator's unmarked option", () => {
    const mode = "lt-proc -w '/d/spa-eng.automorf.bin' | apertium-tagger -g $2 '/d/spa-eng.prob' | apertium-pretransfer | " +
      "lt-proc -b '/d/spa-eng.autobil.bin' | lt-proc $1 '/d/spa-eng.autogen.bin' | sort -z\n"
    expect(nullFlushPipeline(mode)).toBe(
      "stdbuf -o0 lt-proc -z -w '/d/spa-eng.automorf.bin' | stdbuf -o0 apertium-tagger -z -g  '/d/spa-eng.prob' | " +
        "stdbuf -o0 apertium-pretransfer -z | stdbuf -o0 lt-proc -z -b '/d/spa-eng.autobil.bin' | " +
        "stdbuf -o0 lt-proc -z -n '/d/spa-eng.autogen.bin' | stdbuf -o0 sort -z"
    )
  })

  it("numbers a request, escapes the stream format's reserved characters and folds line breaks", () => {
    expect(streamRequest(7, "¿Cuesta $5 [o] <más>?\nsí\0no")).toBe("[q7]¿Cuesta \\$5 \\[o\\] \\<más\\>? sí no\0")
    expect(streamRequest(0, "a/b^c@d{e}\\f")).toBe("[q0]a\\/b\\^c\\@d\\{e\\}\\\\f\0")
  })

  it("reads an answer's number and unescaped text, and refuses one without a number", () => {
    expect(streamAnswer("[q7]Does it cost \\$5 \\[or\\]  more?")).toEqual({ id: 7, text: "Does it cost $5 [or] more?" })
    expect(streamAnswer("\n[q12]hello ")).toEqual({ id: 12, text: "hello" })
    expect(streamAnswer("hello")).toBeUndefined()
    expect(streamAnswer("")).toBeUndefined()
  })
})
