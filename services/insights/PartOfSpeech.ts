/**
 * Part of speech of a sentence's word tokens, for key phrases: the one place that knows the
 * tagger (wink-nlp with its English lite model, MIT, ~4.6 MB, pure JavaScript, no network; it
 * loads in ~0.35 s on first use and tags an hour of speech, ~9,000 words, in 0.15–0.3 s).
 *
 * Chosen on the quality set (test/quality, `npx node bench/quality.ts`): as the noun-phrase
 * filter of `KeyPhrases.ts`, wink-nlp and wink-pos-tagger both raised key-phrase precision from
 * 26/32 to 30/32 (candidate recall 0.86 → 0.89 and 0.90); compromise stayed at 0.78–0.81 (it tags
 * "volunteers" and "waste" as verbs, "draft contract" as noun + verb) and took ~1.5 s per hour of
 * speech. wink-nlp is the maintained one of the two that helped, with universal tags.
 *
 * Tags are the coarse classes key phrases need; "proper" is a word the tagger takes for a proper
 * noun and the text capitalises (the tagger also says it of lower-case words), otherwise "noun".
 * The tagger's own tokens (it splits "don't", "eye-tuning", "70%") are mapped onto the
 * sentence's tokens by character position, a token taking the tag of the last tagger token
 * inside it (the head of a hyphenated compound).
 */
import { createRequire } from "node:module"
import type { Model, WinkMethods } from "wink-nlp"

export type Pos = "noun" | "proper" | "adjective" | "verb" | "number" | "other"

const COARSE: Readonly<Record<string, Pos>> = {
  NOUN: "noun",
  PROPN: "proper",
  ADJ: "adjective",
  VERB: "verb",
  AUX: "verb",
  NUM: "number"
}

/**
 * Loaded on first use (~0.1 s to read the model, ~0.2 s to build the tagger): most processes
 * never make topics, and a static import would add the first to every start.
 */
let tagger: WinkMethods | undefined
const load = (): WinkMethods => {
  const require = createRequire(import.meta.url)
  const winkNLP = require("wink-nlp") as (model: Model, pipe: ReadonlyArray<string>) => WinkMethods
  return winkNLP(require("wink-eng-lite-web-model") as Model, ["sbd", "pos"])
}

/** Character spans of `words` found left to right in `lower` (undefined where a word is not found). */
const spans = (lower: string, words: ReadonlyArray<string>): Array<readonly [number, number] | undefined> => {
  let at = 0
  return words.map((w) => {
    const word = w.toLowerCase().replace(/’/g, "'")
    const found = lower.indexOf(word, at)
    if (found < 0) return undefined
    at = found + word.length
    return [found, at] as const
  })
}

/**
 * One tag per token of `tokens` (the sentence's lower-case word tokens, in order, as
 * `Sentences.ts` cuts them from `text`); "other" where the tagger has no word there.
 */
export const tagTokens = (text: string, tokens: ReadonlyArray<string>): Array<Pos> => {
  tagger ??= load()
  const doc = tagger.readDoc(text)
  const words = doc.tokens().out()
  const tags = doc.tokens().out(tagger.its.pos)
  const lower = text.toLowerCase().replace(/’/g, "'")
  const theirs = spans(lower, words)
  return spans(lower, tokens).map((span) => {
    if (span === undefined) return "other"
    const k = theirs.findLastIndex((t) => t !== undefined && t[0] < span[1] && t[1] > span[0])
    const pos = k < 0 ? "other" : COARSE[tags[k]!] ?? "other"
    return pos === "proper" && !/\p{Lu}/u.test(text[span[0]]!) ? "noun" : pos
  })
}
