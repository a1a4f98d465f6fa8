import { describe, expect, it } from "vitest"
import type { Segment } from "../../src/contract/domain/Transcript.ts"
import { INTRODUCTION, isQuotable, SHORT_WORDS, standsAlone, summaryRelevance, summarySize } from "../../services/insights/Extractive.ts"
import { indexTranscript, ungroundedNames } from "../../services/insights/Grounding.ts"
import { addressedNames, extractCandidates, rankPhrases, stem } from "../../services/insights/KeyPhrases.ts"
import { chunkLines, transcriptLines } from "../../services/insights/LlmInsights.ts"
import { mmr } from "../../services/insights/Mmr.ts"
import { MAX_WORDS, splitSentences } from "../../services/insights/Sentences.ts"
import { findSpeakerNames } from "../../services/insights/SpeakerNames.ts"
import { speakerStats } from "../../services/insights/SpeakerStats.ts"
import { textTiling } from "../../services/insights/TextTiling.ts"
import { clipCandidates } from "../../services/search-index/ClipCandidates.ts"

const seg = (start: number, end: number, text: string, speaker: string | null = null): Segment => ({ start, end, text, speaker })

/** A unit vector along axis `k` of a small space, nudged by `noise` along axis 7. */
const axis = (k: number, noise = 0) => {
  const v = new Float32Array(8)
  v[k] = 1
  v[7] = noise
  const n = Math.hypot(...v)
  return v.map((x) => x / n)
}

describe("splitSentences", () => {
  it("cuts at sentence punctuation across segments and interpolates times inside them", () => {
    const s = splitSentences([
      seg(0, 4, "Dr. Smith went home. She was"),
      seg(4, 6, "tired after the trip! Was it long?"),
      seg(7, 8, "Yes.")
    ])
    expect(s.map((x) => x.text)).toEqual(["Dr. Smith went home.", "She was tired after the trip!", "Was it long?", "Yes."])
    expect(s[0]!.start).toBe(0)
    expect(s[1]!.start).toBeGreaterThan(2)
    expect(s[1]!.start).toBeLessThan(4)
    expect(s[1]!.end).toBeGreaterThan(4)
    expect(s[1]!.end).toBeLessThan(6)
    expect(s[3]).toMatchObject({ start: 7, end: 8 })
    expect(s[1]!.tokens).toEqual(["she", "was", "tired", "after", "the", "trip"])
  })

  it("ends a sentence at a change of speaker, even without punctuation", () => {
    const s = splitSentences([seg(0, 2, "so what do you", "SPEAKER_00"), seg(2, 3, "think about it", "SPEAKER_01")])
    expect(s.map((x) => [x.text, x.speaker])).toEqual([["so what do you", "SPEAKER_00"], ["think about it", "SPEAKER_01"]])
  })

  it("uses word times when the segment has them", () => {
    const s = splitSentences([{
      start: 0,
      end: 10,
      text: "Hello there. Bye now.",
      speaker: null,
      words: [
        { start: 0, end: 0.5, text: "Hello" },
        { start: 0.5, end: 1, text: "there." },
        { start: 8, end: 8.5, text: "Bye" },
        { start: 8.5, end: 10, text: "now." }
      ]
    }])
    expect(s.map((x) => [x.text, x.start, x.end])).toEqual([["Hello there.", 0, 1], ["Bye now.", 8, 10]])
    expect(s[1]!.tokenTimes[0]![0]).toBe(8)
  })

  it("cuts unpunctuated speech: at segment ends first, then every MAX_WORDS words", () => {
    const words = (n: number, w: string) => Array.from({ length: n }, () => w).join(" ")
    const bySegments = splitSentences([seg(0, 10, words(40, "alpha")), seg(10, 20, words(40, "beta"))])
    expect(bySegments.map((x) => x.tokens.length)).toEqual([40, 40])
    const inOne = splitSentences([seg(0, 60, words(150, "gamma"))])
    expect(inOne.every((x) => x.tokens.length <= MAX_WORDS)).toBe(true)
    expect(inOne.reduce((a, x) => a + x.tokens.length, 0)).toBe(150)
  })
})

describe("mmr", () => {
  it("trades relevance against redundancy", () => {
    const v = [axis(0), axis(0, 0.1), axis(1)]
    const sim = (i: number, j: number) => v[i]!.reduce((a, x, k) => a + x * v[j]![k]!, 0)
    expect(mmr([1, 0.95, 0.6], sim, 2, 0.7)).toEqual([0, 2])
    expect(mmr([1, 0.95, 0.6], sim, 2, 1)).toEqual([0, 1])
  })
})

describe("textTiling", () => {
  it("puts the boundary where the subject changes", () => {
    const vectors = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1].map((k, i) => axis(k, (i % 3) * 0.2))
    const starts = textTiling(vectors, vectors.map(() => 10), { window: 3, minSentences: 3, minWords: 20, maxChapters: 4 })
    expect(starts).toEqual([0, 5])
  })

  it("keeps one chapter when chapters would be too short", () => {
    const vectors = [0, 0, 1, 1].map((k) => axis(k))
    expect(textTiling(vectors, [5, 5, 5, 5], { window: 2, minSentences: 3, minWords: 10, maxChapters: 4 })).toEqual([0])
    expect(textTiling([], [], { window: 2, minSentences: 3, minWords: 10, maxChapters: 4 })).toEqual([])
  })
})

describe("key phrases", () => {
  it("stems plurals and keeps content-word n-grams inside sentences", () => {
    expect(["dunes", "beaches", "cities", "walls", "glass", "erosion"].map(stem)).toEqual(["dune", "beach", "city", "wall", "glass", "erosion"])
    const sentences = splitSentences([seg(0, 9, "Sea walls are expensive. We build a sea wall. Laura likes sea walls.")])
    const keys = extractCandidates(sentences, new Set(["laura"])).map((c) => c.key)
    expect(keys).toContain("sea wall")
    // A lone adjective is no topic.
    expect(keys).not.toContain("expensive")
    expect(keys.some((k) => k.includes("laura"))).toBe(false)
    const sea = extractCandidates(sentences).find((c) => c.key === "sea wall")!
    expect(sea.phrase).toBe("sea walls")
    expect(sea.occurrences).toHaveLength(3)
  })

  it("keeps lists, times, amounts, verbs and dangling modifiers out of key phrases", () => {
    const sentences = splitSentences([seg(0, 20, [
      "People bring broken toasters, lamps and radios.",
      "A storm can take ten meters in a single night.",
      "The whole system costs $9,000 and the city pays a quarter of it.",
      "The solar panels work. Our solar panels cover the roof. A lovely morning."
    ].join(" "))])
    const keys = extractCandidates(sentences).map((c) => c.key)
    expect(keys).not.toContain("toaster lamp")
    expect(keys).toContain("toaster")
    expect(keys).not.toContain("night")
    expect(keys).not.toContain("quarter")
    expect(keys).not.toContain("cost")
    expect(keys.some((k) => k.split(" ").includes("bring"))).toBe(false)
    // A participle before its noun is an adjective there.
    expect(keys).toContain("broken toaster")
    expect(keys).not.toContain("solar")
    expect(keys).toContain("solar panel")
    expect(keys).not.toContain("lovely")
  })

  it("ranks by similarity and frequency without repeating a word", () => {
    const sentences = splitSentences([seg(0, 9, "Coastal erosion matters. Coastal erosion again. Music festivals.")])
    const candidates = extractCandidates(sentences)
    // "coastal" is closest to the document, but the longer phrase containing it scores within 90 %.
    const vectorOf = (key: string) =>
      key.includes("music") || key.includes("festival") ? axis(3) : key === "coastal" ? axis(0) : axis(0, 0.2)
    const ranked = rankPhrases(candidates, candidates.map((c) => vectorOf(c.key)), axis(0), 3)
    const phrases = ranked.map((r) => r.candidate.phrase)
    expect(phrases[0]).toBe("coastal erosion")
    expect(phrases).not.toContain("erosion")
    expect(phrases).not.toContain("coastal")
    expect(phrases).toContain("music festivals")
    expect(ranked[0]!.weight).toBe(1)
  })
})

describe("speaker names", () => {
  const turns = (...ts: Array<[string, string]>) =>
    splitSentences(ts.map(([speaker, text], i) => seg(i * 5, i * 5 + 4, text, speaker)))

  it("finds self-introductions, introduced guests and names in address", () => {
    const names = findSpeakerNames(turns(
      ["S0", "Hello and welcome. I'm Ana Lima. Joining us today is Dr. Kofi Mensah."],
      ["S1", "Thank you, Ana. Glad to be here."],
      ["S0", "Kofi, what did you find?"],
      ["S1", "A lot of things."],
      ["S2", "Hi, this is Tom from the newsroom."]
    ))
    expect(Object.fromEntries(names)).toEqual({ S0: "Ana Lima", S1: "Kofi Mensah", S2: "Tom" })
  })

  it("takes 'welcome back, Tom' as the next new voice and 'my name is' as the speaker", () => {
    const names = findSpeakerNames(turns(
      ["S0", "Welcome back, Tom. How was the trip?"],
      ["S1", "It was long. My name is Tom Baker, for the new listeners."]
    ))
    expect(Object.fromEntries(names)).toEqual({ S1: "Tom Baker" })
  })

  it("names nobody without cues, without diarization, or for words that are not names", () => {
    expect(findSpeakerNames(turns(["S0", "I'm Sorry about that."], ["S1", "I'm Glad you called."])).size).toBe(0)
    expect(findSpeakerNames(splitSentences([seg(0, 3, "I'm Ana and this is great.")])).size).toBe(0)
  })
})

describe("quotability and grounding", () => {
  it("refuses dangling openings, questions and fragments", () => {
    const [ok, dangling, question, short] = splitSentences([
      seg(0, 20, "The roots hold the sand together every winter. And then it all washes away again. Why not build more sea walls today? Too short.")
    ])
    expect(isQuotable(ok!)).toBe(true)
    expect(isQuotable(dangling!)).toBe(false)
    expect(isQuotable(question!)).toBe(false)
    expect(isQuotable(short!)).toBe(false)
  })

  it("locates verbatim quotes and flags names the transcript never says", () => {
    const index = indexTranscript(splitSentences([
      seg(0, 4, "I'm Laura Bennett, welcome.", "S0"),
      seg(4, 8, "Sea walls are expensive, around twenty thousand dollars.", "S1")
    ]))
    const found = index.locate("sea walls are expensive around twenty")
    expect(found?.speaker).toBe("S1")
    expect(found!.start).toBeGreaterThanOrEqual(4)
    expect(found!.end).toBeLessThanOrEqual(8)
    expect(index.locate("sea walls are cheap")).toBeNull()
    expect(ungroundedNames("Laura Bennett says sea walls cost a lot.", index)).toEqual([])
    expect(ungroundedNames("The host, Laura Smith, thinks so.", index)).toEqual(["Smith"])
    expect(ungroundedNames("Mike Jones disagrees.", index)).toEqual(["Mike", "Jones"])
    expect(ungroundedNames("Erosion is costly.", index)).toEqual([])
    expect(ungroundedNames("Then Laura's sea wall.", index)).toEqual([])
    expect(ungroundedNames("Miller on the Sea Walls", index)).toEqual([])
    expect(ungroundedNames("Miller on the Sea Walls", index, true)).toEqual(["Miller"])
    expect(ungroundedNames("The Expensive Sea Wall", index, true)).toEqual([])
  })
})

describe("speaker stats and prompt lines", () => {
  it("counts talk time, share and turns per label", () => {
    const segments = [seg(0, 3, "a b", "S0"), seg(3, 4, "c", "S0"), seg(4, 8, "d", "S1"), seg(8, 10, "e", "S0"), seg(10, 11, "", "S1")]
    const evidence = [{ kind: "addressed" as const, start: 0, text: "Tom, are you there?" }]
    expect(speakerStats(segments, new Map([["S1", { name: "Tom", confidence: 0.55, evidence }]]))).toEqual([
      { label: "S0", name: null, name_confidence: null, name_evidence: [], talk_time: 6, share: 0.6, turns: 2 },
      { label: "S1", name: "Tom", name_confidence: 0.55, name_evidence: evidence, talk_time: 4, share: 0.4, turns: 1 }
    ])
    expect(speakerStats([seg(0, 3, "a", null)], new Map())).toEqual([])
  })

  it("renders one line per turn and chunks lines under a size", () => {
    const sentences = splitSentences([seg(0, 3, "Hello there. Fine day.", "S0"), seg(65, 70, "Indeed it is.", "S1")])
    const lines = transcriptLines(sentences, new Map([["S0", "Ana"]]))
    expect(lines).toEqual(["[0:00] Ana: Hello there. Fine day.", "[1:05] S1: Indeed it is."])
    expect(chunkLines(lines, 40)).toEqual(lines)
    expect(chunkLines(lines, 1000)).toEqual([lines.join("\n")])
  })
})

describe("issue 24: content over framing, names and units out, no reaction quotes", () => {
  const turns = (list: ReadonlyArray<readonly [string, string]>): Array<Segment> =>
    list.map(([speaker, text], i) => ({ start: i * 5, end: i * 5 + 4, text, speaker }))
  const sentences = splitSentences(turns([
    ["A", "Welcome back to the show, everyone."],
    ["A", "Grace, how much honey did the hives make?"],
    ["B", "Our twelve hives filled 300 jars of honey last summer."],
    ["A", "Thanks, Grace. Hello Tom and welcome."],
    ["C", "The weather was mild all year long in the valley."]
  ]))

  it("summary relevance: with equal centrality, the answer with a figure leads and the greeting trails", () => {
    const relevance = summaryRelevance(sentences, sentences.map(() => 0.5))
    const at = (prefix: string) => relevance[sentences.findIndex((s) => s.text.startsWith(prefix))]!
    expect(at("Our twelve hives")).toBe(1)
    expect(at("Welcome back")).toBe(0)
    expect(at("Our twelve hives")).toBeGreaterThan(at("The weather"))
    expect(at("The weather")).toBeGreaterThan(at("Grace, how much"))
    expect(at("Grace, how much")).toBeGreaterThan(at("Welcome back"))
  })

  it("names said when addressing someone, and names joined to them by \"and\", are found; ordinary words are not", () => {
    expect([...addressedNames(sentences)].sort()).toEqual(["grace", "tom"])
  })

  it("a sentence opening on a reaction is no quote", () => {
    const [never, plain] = splitSentences(turns([
      ["B", "Never, a rooftop hive makes twice the honey of a country hive."],
      ["B", "A rooftop hive makes twice the honey of a country hive."]
    ]))
    expect(isQuotable(never!)).toBe(false)
    expect(isQuotable(plain!)).toBe(true)
  })
})

describe("issue 24 on the quality set: answers, verbs and framing", () => {
  const turns = (lines: ReadonlyArray<readonly [string, string]>) =>
    lines.map(([speaker, text], i) => seg(i * 5, i * 5 + 4.5, text, speaker))

  it("the first sentence of an answer to another speaker's question, and an introduction, are no quotes", () => {
    const sentences = splitSentences(turns([
      ["A", "My guest is Nora Quinn, who started the repair cafe in our old library."],
      ["A", "Nora, what actually happens at a repair cafe?"],
      ["B", "People bring broken toasters, lamps and bicycles to the volunteers."],
      ["B", "Last year the volunteers repaired about seven hundred items."]
    ]))
    expect(sentences.map((_, i) => standsAlone(sentences, i))).toEqual([false, true, false, true])
  })

  it("topics leave out verbs told by their neighbours and general nouns, keep noun phrases", () => {
    const sentences = splitSentences(turns([
      ["A", "We meet on the first Sunday, and the volunteers fix them in the repair cafe."],
      ["A", "The installer counted space on the roof, and a shared sleeper cabin costs around ninety euros."],
      ["A", "People bring lamps to the repair cafe, and we meet there."]
    ]))
    const phrases = extractCandidates(sentences).map((c) => c.phrase)
    for (const verb of ["meet", "volunteers fix", "installer counted", "cabin costs", "people", "people bring"]) {
      expect(phrases, verb).not.toContain(verb)
    }
    for (const noun of ["repair cafe", "sleeper cabin", "shared sleeper", "installer", "lamps"]) expect(phrases, noun).toContain(noun)
  })

  it("summary sizes: a longer talk about one sentence in 3.5, at least one more than the answered questions, 8 at most", () => {
    expect(summarySize(14)).toBe(4)
    // An interview with four answered questions: room for each answer.
    expect(summarySize(14, 4)).toBe(5)
    expect(summarySize(14, 20)).toBe(8)
    expect(summarySize(3)).toBe(3)
    expect(summarySize(600)).toBe(8)
    expect(SHORT_WORDS).toBe(80)
  })

  it("clip candidates: no quote or insight opens on the show's introduction, a statement still is one", () => {
    const phrases = [
      { start: 0, end: 6, text: "Welcome back to Coastline, the show about our changing shores.", speaker: "A" },
      { start: 6, end: 12, text: "My guest today is a geologist who studies coastal erosion.", speaker: "A" },
      { start: 13, end: 20, text: "Sea walls cost twenty thousand dollars per meter, more than the houses behind them.", speaker: "B" },
      { start: 20, end: 27, text: "I think dune grass is the cheapest defence we have, because the roots hold the sand.", speaker: "B" }
    ]
    for (const kind of ["quote", "insight"] as const) {
      const candidates = clipCandidates(phrases, [], { kind })
      expect(candidates.filter((c) => c.start < 6), kind).toEqual([])
      expect(candidates.length, kind).toBeGreaterThan(0)
    }
  })
})

describe("introductions (summaries and clip candidates share the pattern)", () => {
  it("knows a host's introduction from content that says 'on the line' or 'we also have'", () => {
    for (const text of ["We also have Priya on the line, who runs the dune volunteers.", "We have Oscar on the line.", "My guest today is Dr Emma Clark.", "Welcome back to the show."]) {
      expect(INTRODUCTION.test(text), text).toBe(true)
    }
    for (const text of ["Three hundred jobs are on the line if the plant closes.", "We also have a budget gap of two million."]) {
      expect(INTRODUCTION.test(text), text).toBe(false)
    }
  })
})
