import { describe, expect, it } from "vitest"
import {
  applyLogitRules,
  type LogitRulesConfig,
  logSumExp,
  repetitionPeriod,
  sample,
  seededRandom
} from "../../pipeline/whisper/LogitRules.ts"
import { splitPass } from "../../pipeline/whisper/Segments.ts"
import { groupWords } from "../../pipeline/whisper/WordAlignment.ts"

// A toy vocabulary laid out like Whisper's: text < eot < specials < timestamps.
const TB = 100
const cfg: LogitRulesConfig = {
  eot: 90,
  noTimestamps: 95,
  timestampBegin: TB,
  vocabSize: 200,
  suppress: [5],
  beginSuppress: [7, 90],
  maxInitialTimestampIndex: 50,
  withTimestamps: true
}
const flat = () => new Float32Array(cfg.vocabSize).fill(0)
const allowed = (row: Float32Array) => [...row.keys()].filter((i) => row[i]! > -Infinity)

describe("timestamp rules", () => {
  it("first token: a timestamp no later than max_initial_timestamp", () => {
    const row = flat()
    applyLogitRules(row, [], cfg)
    expect(allowed(row)).toEqual(Array.from({ length: 51 }, (_, i) => TB + i))
  })

  it("after text + one timestamp: only a timestamp ≥ it (closing the pair) or eot", () => {
    const row = flat()
    row[3] = 10 // a strong text token must still be masked
    row[90] = 10 // eot strong enough that no timestamp is forced
    applyLogitRules(row, [TB, 3, 4, TB + 20], cfg)
    // As in HF/OpenAI only ids below eot are masked; specials other than <|notimestamps|>
    // are left to suppress_tokens.
    const specials = [90, 91, 92, 93, 94, 96, 97, 98, 99]
    expect(allowed(row)).toEqual([...specials, ...Array.from({ length: 80 }, (_, i) => TB + 20 + i)])
  })

  it("after a timestamp pair: no timestamp", () => {
    const row = flat()
    row[3] = 5
    applyLogitRules(row, [TB, 3, TB + 20, TB + 20], cfg)
    expect(allowed(row).every((i) => i < TB)).toBe(true)
    expect(row[5]).toBe(-Infinity)
    expect(row[95]).toBe(-Infinity)
  })

  it("forces a timestamp when their total probability beats every text token", () => {
    const row = flat().fill(-5)
    row[3] = 1 // best text token
    for (let i = TB + 10; i < TB + 20; i++) row[i] = 0 // each below it, together above it
    applyLogitRules(row, [TB, 3], cfg)
    expect(allowed(row).every((i) => i >= TB + 1)).toBe(true)
  })

  it("samples reproducibly from a seeded RNG, following the temperature", () => {
    const row = Float32Array.from([2, 1, 0, -Infinity])
    const draw = (seed: number, t: number) => {
      const random = seededRandom(seed)
      return Array.from({ length: 2000 }, () => sample(row, t, random))
    }
    expect(draw(7, 1)).toEqual(draw(7, 1))
    const counts = (xs: Array<number>) => [0, 1, 2, 3].map((k) => xs.filter((x) => x === k).length / xs.length)
    const p = counts(draw(7, 1))
    expect(p[3]).toBe(0)
    expect(p[0]).toBeCloseTo(Math.exp(2) / (Math.exp(2) + Math.exp(1) + 1), 1)
    expect(counts(draw(7, 0.2))[0]).toBeGreaterThan(0.95)
    expect(logSumExp(row)).toBeCloseTo(Math.log(Math.exp(2) + Math.exp(1) + 1), 6)
  })

  it("log-sum-exp of a vocabulary-sized row matches the exact sum, suppressed tokens included", () => {
    const random = seededRandom(3)
    const V = 51865
    for (const spread of [5, 30, 80]) {
      const row = Float32Array.from({ length: V }, () => spread * random() - spread / 2)
      for (let i = 0; i < V; i += 7) row[i] = -Infinity
      row[123] = spread
      let max = -Infinity
      for (const v of row) max = Math.max(max, v)
      let exact = 0
      for (const v of row) exact += Math.exp(v - max)
      expect(Math.abs(logSumExp(row) - (max + Math.log(exact)))).toBeLessThan(1e-7)
      expect(logSumExp(row, max)).toBe(logSumExp(row))
    }
    expect(logSumExp(new Float32Array([-Infinity, -Infinity]))).toBe(-Infinity)
    expect(logSumExp(new Float32Array([0]))).toBeCloseTo(0, 12)
  })

  it("detects repetition loops", () => {
    expect(repetitionPeriod([1, 2, 3, 4, 5])).toBe(0)
    expect(repetitionPeriod([9, ...Array.from({ length: 30 }, (_, i) => [7, 8, 6][i % 3]!)])).toBe(3)
  })
})

describe("splitPass", () => {
  it("cuts at timestamp pairs and consumes the pass on a single final timestamp", () => {
    const split = splitPass([TB, 1, 2, TB + 160, TB + 160, 3, TB + 360], TB, 7.05)
    expect(split.segments).toEqual([
      { start: 0, end: 3.2, from: 1, to: 3 },
      { start: 3.2, end: 7.2, from: 5, to: 6 }
    ])
    expect(split.resume).toBe(false)
    expect(split.consumed).toBe(7.05)
  })

  it("drops an unfinished tail and resumes at the last pair", () => {
    const split = splitPass([TB, 1, TB + 100, TB + 100, 3, 4], TB, 20, 1)
    expect(split.segments).toEqual([{ start: 0, end: 2, from: 1, to: 2 }])
    expect(split.resume).toBe(true)
    expect(split.consumed).toBeCloseTo(2)
  })

  it("keeps the tail when less than the minimum is left", () => {
    const split = splitPass([TB, 1, TB + 100, TB + 100, 3, 4], TB, 2.5, 1)
    expect(split.resume).toBe(false)
    expect(split.segments.at(-1)).toEqual({ start: 2, end: 2.5, from: 4, to: 6 })
  })
})

describe("groupWords", () => {
  const pieces: Record<number, string> = { 1: " Good", 2: " morn", 3: "ing", 4: ",", 5: " (", 6: "yes", 7: ")" }
  const decode = (ids: ReadonlyArray<number>) => ids.map((i) => pieces[i] ?? "").join("")
  it("joins sub-words and attaches punctuation", () => {
    expect(groupWords([1, 2, 3, 4, 5, 6, 7], decode).map((w) => [w.text, w.from, w.to])).toEqual([
      [" Good", 0, 1],
      [" morning,", 1, 4],
      [" (yes)", 4, 7]
    ])
  })
})
