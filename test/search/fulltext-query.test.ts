/**
 * The full-text candidate query of the Postgres backend (pure parts): which words of a
 * question become tsquery groups, and how the coverage rule is put to the GIN index.
 */
import { describe, expect, it } from "vitest"
import { contentWords, coverQuery } from "../../search/PostgresSearchBackend.ts"

describe("full-text candidate query", () => {
  it("keeps content words only, once each, in their own spelling", () => {
    expect(contentWords("When is the Library open? The library, I mean")).toEqual(["Library", "open", "mean"])
    expect(contentWords("¿Qué día abre el mercado?")).toEqual(["día", "abre", "mercado"])
    expect(contentWords("is it on")).toEqual([])
  })

  it("no content word: no cover query (the caller falls back to the question's lexemes)", () => {
    expect(coverQuery("is it on", [])).toBeUndefined()
  })

  it("one or two words of an English question: all of them", () => {
    expect(coverQuery("library", ["('librari' | 'library')"])).toBe("('librari' | 'library')")
    expect(coverQuery("when is the library open", ["(a)", "(b)"])).toBe("((a) & (b))")
  })

  it("four words of an English question: any two of them, as an OR of ANDs", () => {
    const q = coverQuery("how fast is the shoreline retreating each year", ["(f)", "(s)", "(r)", "(y)"])!
    const combos = q.split(" | ")
    expect(combos).toHaveLength(6)
    expect(combos).toContain("((f) & (s))")
    expect(combos).toContain("((r) & (y))")
  })

  it("many words (more than 64 combinations) or another language: any one of them", () => {
    const groups = Array.from({ length: 10 }, (_, i) => `(w${i})`)
    expect(coverQuery("what does the committee think about the budget plans hiring targets salaries offices", groups)).toBe(groups.join(" | "))
    expect(coverQuery("¿Qué día abre el mercado?", ["(a)", "(b)", "(c)"])).toBe("(a) | (b) | (c)")
  })
})
