import { describe, expect, it } from "@effect/vitest"
import { highlights, queryTerms, termMatches } from "../../search/Highlights.ts"
import { cutPassages, WINDOW_MAX_SECONDS, WINDOW_MAX_WORDS, WINDOW_MIN_SECONDS, WINDOW_MIN_WORDS } from "../../search/Passages.ts"
import { namesOf, relevanceOf } from "../../search/Relevance.ts"
import { mergeMoments } from "../../search/SearchIndex.ts"
import { transcriptOf } from "./support.ts"

const words = (text: string) => text.split(/\s+/u).filter((w) => w !== "").length

// 60 lines of 8 words at 2.6 words/s: ~3.1 s each, ~210 s in all.
const long = transcriptOf(
  Array.from({ length: 60 }, (_, i) => ({
    text: `Line ${i} says seven more words about things.`,
    speaker: i % 3 === 0 ? "SPEAKER_01" : "SPEAKER_00"
  }))
)

describe("cutPassages", () => {
  const passages = cutPassages(long)
  const windows = passages.filter((p) => p.kind === "window")
  const singles = passages.filter((p) => p.kind === "segment")

  it("keeps every segment alone as well", () => {
    expect(singles.map((p) => p.text)).toEqual(long.segments.map((s) => s.text))
    expect(singles[5]!.start).toBe(long.segments[5]!.start)
    expect(singles[5]!.speaker).toBe(long.segments[5]!.speaker)
  })

  it("makes windows of 30–45 s or 80–120 words from whole segments", () => {
    expect(windows.length).toBeGreaterThan(5)
    for (const w of windows.slice(0, -1)) {
      const seconds = w.end - w.start
      const count = words(w.text)
      expect(seconds >= WINDOW_MIN_SECONDS || count >= WINDOW_MIN_WORDS).toBe(true)
      expect(seconds).toBeLessThanOrEqual(WINDOW_MAX_SECONDS)
      expect(count).toBeLessThanOrEqual(WINDOW_MAX_WORDS)
      // Snapped: starts and ends on segment boundaries.
      expect(long.segments.some((s) => s.start === w.start)).toBe(true)
      expect(long.segments.some((s) => s.end === w.end)).toBe(true)
      expect(w.moments.length).toBeGreaterThan(1)
      expect(w.speaker).toBe("SPEAKER_00")
    }
  })

  it("overlaps consecutive windows by about half and covers the whole transcript", () => {
    for (let i = 1; i < windows.length; i++) {
      const prev = windows[i - 1]!
      const overlap = prev.end - windows[i]!.start
      expect(overlap / (prev.end - prev.start)).toBeGreaterThan(0.35)
      expect(overlap / (prev.end - prev.start)).toBeLessThan(0.65)
    }
    expect(windows[0]!.start).toBe(long.segments[0]!.start)
    expect(windows.at(-1)!.end).toBe(long.segments.at(-1)!.end)
  })

  it("joins a sentence split across segments into one moment, within one speaker's turn", () => {
    const split = cutPassages(transcriptOf([
      { text: "The bees on the roof are on the", speaker: "A" },
      { text: "north side of the building.", speaker: "A" },
      { text: "And the hives", speaker: "A" },
      { text: "Never.", speaker: "B" },
      { text: "Short pause then", speaker: "B" },
      { text: "a far later line.", speaker: "B", start: 60, end: 62 }
    ])).filter((p) => p.kind === "segment")
    expect(split.map((p) => p.text)).toEqual([
      "The bees on the roof are on the north side of the building.",
      "And the hives",
      "Never.",
      "Short pause then",
      "a far later line."
    ])
    expect(split[0]!.start).toBe(0)
    expect(split[0]!.end).toBeGreaterThan(split[0]!.start + 4)
    expect(split[0]!.moments).toHaveLength(1)
  })

  it("gives one window for a short transcript, none for one segment, nothing for no speech", () => {
    const short = transcriptOf([{ text: "One." }, { text: "Two." }, { text: "Three." }])
    expect(cutPassages(short).filter((p) => p.kind === "window").length).toBe(1)
    expect(cutPassages(transcriptOf([{ text: "Alone." }])).map((p) => p.kind)).toEqual(["segment"])
    expect(cutPassages(transcriptOf([{ text: "  " }]))).toEqual([])
  })

  it("cuts a long segment into sentence moments with interpolated times", () => {
    const text = "First we looked at the budget in detail. Then we talked about hiring two engineers. Finally we set a date."
    const t = transcriptOf([{ text, start: 10, end: 34, speaker: "SPEAKER_02" }])
    const singles = cutPassages(t).filter((p) => p.kind === "segment")
    expect(singles.map((p) => p.text)).toEqual([
      "First we looked at the budget in detail.",
      "Then we talked about hiring two engineers.",
      "Finally we set a date."
    ])
    expect(singles[0]!.start).toBe(10)
    expect(singles.at(-1)!.end).toBe(34)
    for (const p of singles) {
      expect(p.end - p.start).toBeLessThanOrEqual(12)
      expect(p.speaker).toBe("SPEAKER_02")
    }
    expect(singles[1]!.start).toBeCloseTo(10 + 24 * (text.indexOf("Then") / text.length), 5)
  })

  it("lets a segment longer than a window stand alone and moves on", () => {
    // One 50 s word with nowhere to cut: a single moment longer than any window.
    const t = transcriptOf([{ text: "a", start: 0, end: 50 }, { text: "b.", start: 50, end: 55 }, { text: "c.", start: 55, end: 60 }])
    const ws = cutPassages(t).filter((p) => p.kind === "window")
    expect(ws.map((w) => w.text)).toEqual(["b. c."])
  })
})

describe("highlights", () => {
  it("marks the words sharing a stem with the question's content words", () => {
    const terms = queryTerms("When does the Library close?")
    expect(terms).toEqual(["library", "close"])
    const text = "The libraries closes at nine; the reading room opens at seven."
    expect(highlights(text, terms).map(([a, b]) => text.slice(a, b))).toEqual(["libraries", "closes"])
    expect(highlights(text, queryTerms("the of and"))).toEqual([])
    const es = "El mercado abre los sábados."
    expect(highlights(es, queryTerms("¿Cuándo abre el Mercado?")).map(([a, b]) => es.slice(a, b))).toEqual(["mercado", "abre"])
  })

  it("matches inflections of a question word, not every word it begins (issue 24: market ≠ Marketing)", () => {
    const marked = (q: string, text: string) => highlights(text, queryTerms(q)).map(([a, b]) => text.slice(a, b))
    expect(marked("when does the market open", "Marketing will move the announcement to the following Tuesday.")).toEqual([])
    expect(marked("when does the market open", "The markets opened early; the marketplace was closed.")).toEqual(["markets", "opened"])
    expect(marked("who studies the dunes", "She studied one dune.")).toEqual(["studied", "dune"])
    expect(marked("frutas frescas", "Fruta fresca y frescos.")).toEqual(["Fruta", "fresca", "frescos"])
    // Short stems take a plural only.
    expect(termMatches("day", "days")).toBe(true)
    expect(termMatches("city", "cities")).toBe(true)
    expect(termMatches("wind", "win")).toBe(false)
    expect(termMatches("car", "cared")).toBe(false)
    expect(termMatches("close", "closed")).toBe(true)
    expect(termMatches("close", "closet")).toBe(false)
    // A possessive is its word, in the question and in the passage.
    expect(queryTerms("what is the company's revenue plan")).toContain("company")
    expect(marked("what is the company's plan", "The company plans to grow; Tom's company too.")).toEqual(["company", "plans", "company"])
    expect(marked("what did Tom say", "Tom's answer was short.")).toEqual(["Tom's"])
  })

  it("gives no lexical relevance for a word that only begins like the question's", () => {
    // Both content words "found" by a raw prefix: the hit got the all-words relevance (0.75)
    // whatever its meaning. With the cosine of an unrelated text it is now near 0.
    expect(relevanceOf("when does the market open", "Marketing opens the campaign on Tuesday.", 0.2)).toBeLessThan(0.1)
    expect(relevanceOf("when does the market open", "The market opens on Tuesday.", 0.2)).toBe(0.75)
  })

  it("asks more of the cosine when the hit names none of what the question names", () => {
    expect(namesOf("stock market crash in Tokyo")).toEqual(["tokyo"])
    expect(namesOf("When was the Eiffel Tower built, and may I go?")).toEqual(["eiffel", "tower"])
    expect(namesOf("¿Cuál es la capital de Australia?")).toEqual(["australia"])
    expect(namesOf("stock market crash in tokyo")).toEqual([])
    // Cosine 0.407: the crash that delayed a launch (measured on an AVX2 machine) is not about Tokyo.
    const crash = "We agreed to postpone the launch by one week so the crash can be fixed."
    expect(relevanceOf("stock market crash in Tokyo", crash, 0.407)).toBeLessThan(0.5)
    expect(relevanceOf("stock market crash in tokyo", crash, 0.407)).toBeGreaterThan(0.5)
    // A hit holding a name, in any form, or said by the named speaker keeps the usual midpoint.
    const train = "A night train from Vienna to Paris takes about fourteen hours."
    expect(relevanceOf("how long is the journey from Vienna to Paris", train, 0.407)).toBe(relevanceOf("how long is the journey", train, 0.407))
    expect(relevanceOf("what did Laura say about dunes", "We plant dune grass.", 0.407, "Laura")).toBeGreaterThan(0.5)
    expect(relevanceOf("what did Laura say about dunes", "We plant dune grass.", 0.407, "Tom")).toBeLessThan(0.5)
  })
})

describe("mergeMoments", () => {
  const m = (start: number, end: number, text: string) => ({ start, end, text, speaker: null })
  it("joins moments of one job that overlap, keeps the rest apart, best first, up to the limit", () => {
    const hits = mergeMoments([
      { jobId: "a", filename: "a.wav", moment: m(10, 14, "second"), score: 0.02 },
      { jobId: "a", filename: "a.wav", moment: m(8, 11, "first"), score: 0.03 },
      { jobId: "b", filename: "b.wav", moment: m(8, 11, "other job"), score: 0.025 },
      { jobId: "a", filename: "a.wav", moment: m(30, 32, "later"), score: 0.01 }
    ], 2, [])
    expect(hits.map((h) => [h.job_id, h.start, h.end, h.text, h.score])).toEqual([
      ["a", 8, 14, "first second", 0.03],
      ["b", 8, 11, "other job", 0.025]
    ])
  })
})
