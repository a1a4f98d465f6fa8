/**
 * Key-phrase candidates by part of speech (issue 24 item 3): the tagger behind
 * `PartOfSpeech.ts` and the noun-phrase rules of `KeyPhrases.ts`, on the sentences whisper
 * gave for the quality set where the rules without a tagger produced wrong topics.
 */
import { describe, expect, it } from "vitest"
import type { Segment } from "../../src/contract/domain/Transcript.ts"
import { extractCandidates } from "../../services/insights/KeyPhrases.ts"
import { tagTokens } from "../../services/insights/PartOfSpeech.ts"
import { splitSentences, tokenize } from "../../services/insights/Sentences.ts"

const seg = (start: number, end: number, text: string): Segment => ({ start, end, text, speaker: null })
const keysOf = (...texts: Array<string>) => extractCandidates(splitSentences([seg(0, 30, texts.join(" "))])).map((c) => c.key)

describe("part of speech", () => {
  it("gives one tag per sentence token, across the tagger's own splits of contractions, hyphens and figures", () => {
    const text = "Fixing a radio keeps electronic waste down, don't you think? Eye-tuning costs 70% of the money in Berlin."
    const tokens = tokenize(text)
    const tags = tagTokens(text, tokens)
    expect(tags).toHaveLength(tokens.length)
    const at = (word: string) => tags[tokens.indexOf(word)]
    expect(at("fixing")).toBe("verb")
    expect(at("radio")).toBe("noun")
    expect(at("electronic")).toBe("adjective")
    expect(at("waste")).toBe("noun")
    expect(at("70")).toBe("number")
    expect(at("berlin")).toBe("proper")
  })
})

/** The candidate keys (stems) of `texts` hold every phrase of `has` and none of `lacks`. */
const expectKeys = (texts: ReadonlyArray<string>, has: ReadonlyArray<string>, lacks: ReadonlyArray<string>) => {
  const keys = keysOf(...texts)
  for (const key of has) expect(keys, key).toContain(key)
  for (const key of lacks) expect(keys, key).not.toContain(key)
}

describe("key-phrase candidates by part of speech", () => {
  it("leave out verbs and participles a noun phrase does not hold", () => {
    expectKeys(
      ["Fixing a radio keeps it out of the landfill and it keeps electronic waste down.", "Welcome to the show about our changing shores."],
      ["shore", "electronic waste", "landfill"],
      ["fixing", "changing shore"]
    )
  })

  it("let an adjective open a phrase but not be one", () => {
    expectKeys(["The operators have decided to add three new routes.", "The whole system is expensive."], ["new route", "whole system"], [
      "new",
      "whole",
      "expensive"
    ])
  })

  it("leave out a place or a day said once inside a sentence, keep one the recording keeps saying", () => {
    expectKeys(
      ["The operators have decided to add three new routes, including one from Berlin to Stockholm.", "The installer comes next Tuesday."],
      ["route"],
      ["berlin", "tuesday"]
    )
    expectKeys(["We moved to Berlin last spring.", "Rents in Berlin have doubled since then."], ["berlin"], [])
  })

  it("leave out what the tagger takes for a noun before a figure or after a pronoun", () => {
    expectKeys(
      ["A bed in a shared sleeper cabin costs around 90 euros.", "Let us schedule a meeting with the legal team."],
      ["sleeper cabin", "meeting", "legal team"],
      ["cabin cost", "schedule"]
    )
  })
})
