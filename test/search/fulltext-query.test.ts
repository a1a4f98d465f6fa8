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

  /** The cover query's truth for a passage holding the words of `present` (groups "(w0)", "(w1)"…). */
  const holds = (query: string, present: ReadonlySet<number>): boolean =>
    new Function(`return ${query.replace(/\(w(\d+)\)/gu, (_, i) => String(present.has(Number(i)))).replaceAll("&", "&&").replaceAll("|", "||")}`)() as boolean

  it("three to seven words of an English question: any half of them (rounded up) together, and no fewer", () => {
    for (let n = 3; n <= 7; n++) {
      const groups = Array.from({ length: n }, (_, i) => `(w${i})`)
      const query = coverQuery("how fast is the shoreline retreating each year", groups)!
      const needed = Math.ceil(n / 2)
      // Every subset of the words a passage can hold.
      for (let mask = 0; mask < 2 ** n; mask++) {
        const present = new Set(groups.map((_, i) => i).filter((i) => (mask & (1 << i)) !== 0))
        expect(holds(query, present), `${n} words, ${[...present]} in ${query}`).toBe(present.size >= needed)
      }
    }
    // Factored: each word once per branch, not once per combination (35 clauses of 4 for 4 of 7).
    const seven = coverQuery("how many metres of cliff does the coast lose every year", Array.from({ length: 7 }, (_, i) => `(w${i})`))!
    expect(seven.match(/\(w0\)/gu)).toHaveLength(1)
    expect(seven.length).toBeLessThan(35 * 4 * 6)
  })

  it("many words (more than 64 combinations) or another language: any one of them", () => {
    const groups = Array.from({ length: 10 }, (_, i) => `(w${i})`)
    expect(coverQuery("what does the committee think about the budget plans hiring targets salaries offices", groups)).toBe(groups.join(" | "))
    expect(coverQuery("¿Qué día abre el mercado?", ["(a)", "(b)", "(c)"])).toBe("(a) | (b) | (c)")
  })
})
