/**
 * The quality set (issue 24, "Proof that stays"): six recordings with annotations and the real
 * pipeline's transcripts of them, and the measures `bench/quality.ts` prints and
 * `test/quality/quality.test.ts` holds.
 *
 * q01–q04 are made here (`make.py`: festival and espeak-ng voices, 25–64 s, 1–3 speakers);
 * q05 and q06 are shared/media a05 and a08. Each `qNN_*.json` holds the turns (with times where
 * known), `facts` (what a summary should carry: each fact a list of accepted spellings, e.g.
 * "seventy percent" or "70%"), `key_phrases` (every phrase a person would accept as a topic),
 * `questions` (a paraphrase → the turn, or a sentence of it, that answers it; `says` where the
 * turn has no times) and `unanswerable` questions. `transcripts/qNN_*.json` are the CLI's
 * transcripts of the audio (`transcribe.sh`: default model, diarization, word times), so
 * whisper's mishearings are part of what is measured.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { ClipCandidate } from "../../src/contract/api/SearchApi.ts"
import type { Insights } from "../../src/contract/domain/Insights.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { stem } from "../../services/insights/KeyPhrases.ts"

export const qualityDir = import.meta.dirname

interface Timed {
  readonly start: number
  readonly end: number
}

export interface Turn extends Partial<Timed> {
  readonly speaker: string
  readonly text: string
  readonly sentences?: ReadonlyArray<Timed>
}

export interface Question {
  readonly q: string
  readonly turn: number
  readonly sentence?: number
  /** Words the answering moment says, for turns without times. */
  readonly says?: string
}

export interface Annotation {
  readonly name: string
  readonly file?: string
  readonly media?: string
  readonly turns: ReadonlyArray<Turn>
  readonly facts: ReadonlyArray<ReadonlyArray<string>>
  readonly key_phrases: ReadonlyArray<string>
  readonly questions: ReadonlyArray<Question>
  readonly unanswerable: ReadonlyArray<string>
}

export interface Recording {
  readonly annotation: Annotation
  readonly transcript: Transcript
}

export const qualitySet: ReadonlyArray<Recording> = fs.readdirSync(qualityDir)
  .filter((f) => /^q\d\d_.*\.json$/.test(f))
  .sort()
  .map((f) => {
    const name = f.replace(/\.json$/, "")
    const annotation = { name, ...JSON.parse(fs.readFileSync(path.join(qualityDir, f), "utf8")) } as Annotation
    const transcript = JSON.parse(fs.readFileSync(path.join(qualityDir, "transcripts", f), "utf8")) as Transcript
    return { annotation, transcript }
  })

/** Lower case, digits joined ("20,000" → "20000"), punctuation out, single spaces. */
export const normalize = (text: string): string =>
  text.toLowerCase().replace(/(\d),(\d)/g, "$1$2").replace(/[^\p{L}\p{N}%$ ]+/gu, " ").replace(/\s+/g, " ").trim()

const says = (text: string, phrase: string) => ` ${normalize(text)} `.includes(` ${normalize(phrase)} `)

// ---- moments ----

/** The time range that answers a question, when the annotation has times. */
export const momentRange = (a: Annotation, q: Question): Timed | undefined => {
  const turn = a.turns[q.turn]!
  const sentence = q.sentence === undefined ? undefined : turn.sentences?.[q.sentence]
  if (sentence !== undefined) return sentence
  return turn.start === undefined || turn.end === undefined ? undefined : { start: turn.start, end: turn.end }
}

/**
 * A hit is the right moment when its middle lies in the answering range (0.5 s of slack for
 * the recogniser's times), or, without times, when it says the annotated words.
 */
export const rightMoment = (a: Annotation, q: Question, hit: Timed & { readonly text: string }): boolean => {
  const range = momentRange(a, q)
  if (range === undefined) return says(hit.text, q.says ?? a.turns[q.turn]!.text)
  const middle = (hit.start + hit.end) / 2
  return middle >= range.start - 0.5 && middle <= range.end + 0.5
}

// ---- summaries ----

export interface FactCoverage {
  /** Facts the summary says (any accepted spelling). */
  readonly covered: number
  readonly facts: number
  /** Facts the transcript says at all (whisper may mishear one): the most an extractive summary can hold. */
  readonly heard: number
  readonly missing: ReadonlyArray<string>
}

export const factCoverage = (r: Recording, summary: string): FactCoverage => {
  const facts = r.annotation.facts
  const inSummary = facts.filter((f) => f.some((s) => says(summary, s)))
  return {
    covered: inSummary.length,
    facts: facts.length,
    heard: facts.filter((f) => f.some((s) => says(r.transcript.text, s))).length,
    missing: facts.filter((f) => !inSummary.includes(f)).map((f) => f[0]!)
  }
}

// ---- topics ----

const stems = (phrase: string) => normalize(phrase).split(" ").map(stem).join(" ")

/** Topics that are one of the annotated key phrases (singular and plural alike). */
export const keyPhraseHits = (r: Recording, topics: Insights["topics"]): { readonly right: number; readonly wrong: ReadonlyArray<string> } => {
  const accepted = new Set(r.annotation.key_phrases.map(stems))
  const wrong = topics.filter((t) => !accepted.has(stems(t.phrase))).map((t) => t.phrase)
  return { right: topics.length - wrong.length, wrong }
}

export interface CandidateRecall {
  /** Annotated key phrases the transcript says (whisper may mishear one). */
  readonly heard: number
  /** Of those, how many are key-phrase candidates (before ranking). */
  readonly candidates: number
  readonly missing: ReadonlyArray<string>
}

/** How many of the annotated key phrases the transcript says are candidates: what the candidate rules may not lose. */
export const candidateRecall = (r: Recording, candidateKeys: ReadonlySet<string>): CandidateRecall => {
  const heard = r.annotation.key_phrases.filter((p) => says(r.transcript.text, p))
  const missing = heard.filter((p) => !candidateKeys.has(stems(p)))
  return { heard: heard.length, candidates: heard.length - missing.length, missing }
}

// ---- quotes and clip candidates ----

/** An opening that leans on something said before: a reaction, a greeting or a bare answer. */
const REACTION = /^(never|yes|no|yeah|yep|nope|exactly|absolutely|sure|right|indeed|true|correct|definitely|wow|hi|hello|thanks|thank you|great|good|agreed|okay|ok|that is|that's|this is|all the time)\b/i

/**
 * Why a quote or candidate starting at `start` with `text` does not stand alone, or undefined:
 * its first sentence is a reaction or three words at most, or the transcript's last segment
 * before it, by another speaker, is a question it leaves out (it opens on the answer).
 */
export const opensBadly = (transcript: Transcript, start: number, text: string): string | undefined => {
  const first = text.split(/(?<=[.!?])\s+/)[0]!
  if (REACTION.test(first)) return "opens on a reaction"
  if (first.split(/\s+/).length <= 3) return "opens on a bare answer"
  const at = transcript.segments.findIndex((s) => s.end > start + 0.05)
  const opening = transcript.segments[at]
  const before = at > 0 ? transcript.segments[at - 1] : undefined
  // Starting inside a segment: what comes before it is the same speaker's.
  if (before === undefined || opening === undefined || opening.start < start - 0.3) return undefined
  if (/\?["'”]?\s*$/.test(before.text) && before.speaker !== opening.speaker) return "opens on the answer to a question left out"
  return undefined
}

export interface CandidateCheck {
  readonly total: number
  readonly bad: ReadonlyArray<{ readonly text: string; readonly why: string }>
}

export const checkOpenings = (
  transcript: Transcript,
  items: ReadonlyArray<{ readonly start: number; readonly text: string }>
): CandidateCheck => ({
  total: items.length,
  bad: items.flatMap((i) => {
    const why = opensBadly(transcript, i.start, i.text)
    return why === undefined ? [] : [{ text: i.text, why }]
  })
})

export type { ClipCandidate }
