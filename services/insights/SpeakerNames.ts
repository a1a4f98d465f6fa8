/**
 * Names of diarized speakers, from what the recording says. Each cue is a vote for a
 * (speaker label, name) pair:
 *
 * | cue | example | who is named | weight |
 * |---|---|---|---|
 * | self-introduction | "I'm Ana", "my name is Ana", "Ana here", "this is Ana" (opening a turn) | the speaker | 3 |
 * | introduction of a guest | "my guest today is Dr. Ruiz", "joining us is Tom", "we have Priya on the line", "please welcome Tom", "welcome back, Tom" | the first new voice after the turn (else the next speaker) | 2 |
 * | question addressed by name | "Samuel, how fast…?", "…, Tom?" | the next speaker | 2 |
 * | greeting or thanks by name opening a turn | "Thanks, Laura.", "Hi Laura." | the previous speaker | 1 |
 *
 * A speaker who introduces, addresses or thanks a name gets a strong vote against being it.
 * A first name said alone counts for the full name it opens ("Samuel" → "Samuel Ortiz").
 * Pairs are then taken greedily by total weight, one name per speaker and one speaker per name,
 * and only with a positive total. Names are returned as said in the transcript, so they always
 * occur in it. Names must be capitalised, as Whisper writes them.
 */
import type { Sentence } from "./Sentences.ts"
import { STOPWORDS } from "./Stopwords.ts"

const TITLE = String.raw`(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+|(?:Doctor|Professor)\s+)`
const WORD = String.raw`\p{Lu}[\p{L}'’\-]*`
const NAME = String.raw`(${TITLE}?${WORD}(?:\s+${WORD}){0,2})`

/** Capitalised words that follow the cue phrases without being names. */
const NOT_NAMES = new Set(
  (
    "sorry glad happy fine good back excited afraid ready curious here there not so very just going pleased " +
    "delighted thrilled honored honoured grateful joined joining today tonight now also the a an our your my this that " +
    "everyone everybody all folks guys listeners friends welcome thanks thank and but"
  ).split(/\s+/)
)

type Target = "self" | "introduced" | "next" | "previous"

interface Cue {
  readonly pattern: RegExp
  readonly target: Target
  readonly weight: number
  /** Only in the first sentence of a turn. */
  readonly opening?: boolean
}

const cue = (source: string, target: Target, weight: number, opening = false): Cue => ({
  pattern: new RegExp(source, "gu"),
  target,
  weight,
  opening
})

const CUES: ReadonlyArray<Cue> = [
  cue(String.raw`\b(?:I'm|I’m|I am)\s+${NAME}`, "self", 3),
  cue(String.raw`\b[Mm]y name(?:'s|’s| is)\s+${NAME}`, "self", 3),
  cue(String.raw`^(?:(?:Hi|Hello|Hey)[,!]?\s+)?(?:[Tt]his is|[Ii]t's|[Ii]t’s)\s+${NAME}(?=\s+(?:here|speaking|from|with)\b|[,.!]|$)`, "self", 3, true),
  cue(String.raw`^${NAME}\s+here\b`, "self", 3, true),
  cue(String.raw`\b(?:[Mm]y|[Oo]ur) (?:guests?|co-host|cohost|panelists?|speakers?)(?: today| tonight| this week| here| now)? (?:is|are)\s+${NAME}`, "introduced", 2),
  cue(String.raw`\b[Jj]oining (?:us|me)(?: today| tonight| now| here| again)? (?:is|are)\s+${NAME}`, "introduced", 2),
  cue(String.raw`\b[Ww]e (?:also )?have\s+${NAME}\s+(?:on the line|with us|here|joining)`, "introduced", 2),
  cue(String.raw`\b(?:[Pp]lease|[Ll]et's|[Ll]et’s) welcome\s+${NAME}`, "introduced", 2),
  cue(String.raw`\b[Ww]elcome(?: back)?,\s+${NAME}(?=[,.!?]|$)`, "introduced", 2),
  cue(String.raw`\b[Jj]oined by\s+${NAME}`, "introduced", 2),
  cue(String.raw`^${NAME},\s+[^?]*\?$`, "next", 2),
  cue(String.raw`,\s+${NAME}\?$`, "next", 2),
  cue(String.raw`^(?:(?:[Tt]hanks|[Tt]hank you|[Hh]i|[Hh]ello|[Hh]ey|[Gg]ood (?:morning|afternoon|evening))(?: so much| very much)?,?\s+)${NAME}(?=[,.!?]|$)`, "previous", 1, true)
]

const TITLE_WORDS = new Set(["dr", "mr", "mrs", "ms", "prof", "doctor", "professor"])

/** Trims non-name words off the end; null when nothing name-like is left. */
const cleanName = (raw: string): string | null => {
  const words = raw.trim().split(/\s+/)
  while (words.length > 0) {
    const last = words[words.length - 1]!.toLowerCase().replace(/[.’']/g, "")
    if (NOT_NAMES.has(last) || STOPWORDS.has(last) || TITLE_WORDS.has(last)) words.pop()
    else break
  }
  const first = words.find((w) => !TITLE_WORDS.has(w.toLowerCase().replace(/\./g, "")))
  if (first === undefined) return null
  const key = first.toLowerCase().replace(/[’']/g, "'")
  if (NOT_NAMES.has(key) || STOPWORDS.has(key) || key.length < 2) return null
  return words.join(" ")
}

const bareWords = (name: string): Array<string> =>
  name.split(/\s+/).filter((w) => !TITLE_WORDS.has(w.toLowerCase().replace(/\./g, ""))).map((w) => w.toLowerCase())

export const findSpeakerNames = (sentences: ReadonlyArray<Sentence>): Map<string, string> => {
  const turns: Array<{ speaker: string; sentences: Array<Sentence> }> = []
  for (const s of sentences) {
    if (s.speaker === null) continue
    const last = turns[turns.length - 1]
    if (last !== undefined && last.speaker === s.speaker) last.sentences.push(s)
    else turns.push({ speaker: s.speaker, sentences: [s] })
  }
  const votes: Array<{ label: string; name: string; weight: number }> = []
  const firstTurn = new Map<string, number>()
  turns.forEach((t, i) => {
    if (!firstTurn.has(t.speaker)) firstTurn.set(t.speaker, i)
  })
  const targetOf = (target: Target, t: number): string | undefined => {
    const speaker = turns[t]!.speaker
    switch (target) {
      case "self":
        return speaker
      case "previous":
        return turns[t - 1]?.speaker
      case "next":
        return turns[t + 1]?.speaker
      case "introduced": {
        for (let u = t + 1; u < turns.length; u++) {
          if (turns[u]!.speaker !== speaker && firstTurn.get(turns[u]!.speaker) === u) return turns[u]!.speaker
        }
        return turns[t + 1]?.speaker
      }
    }
  }
  turns.forEach((turn, t) => {
    turn.sentences.forEach((sentence, k) => {
      for (const c of CUES) {
        if (c.opening === true && k > 0) continue
        for (const m of sentence.text.matchAll(c.pattern)) {
          const name = cleanName(m[1]!)
          if (name === null) continue
          if (c.target !== "self") votes.push({ label: turn.speaker, name, weight: -5 })
          const label = targetOf(c.target, t)
          if (label !== undefined && (c.target === "self" || label !== turn.speaker)) {
            votes.push({ label, name, weight: c.weight })
          }
        }
      }
    })
  })
  // A name said alone counts for the longest name it opens.
  const names = [...new Set(votes.map((v) => v.name))]
  const canonical = (name: string): string => {
    const words = bareWords(name)
    let best = name
    for (const other of names) {
      const ow = bareWords(other)
      if (ow.length > bareWords(best).length && words.every((w, i) => ow[i] === w)) best = other
    }
    return best
  }
  const totals = new Map<string, { label: string; name: string; weight: number }>()
  for (const v of votes) {
    const name = canonical(v.name)
    const key = `${v.label}\u0000${name.toLowerCase()}`
    const entry = totals.get(key) ?? { label: v.label, name, weight: 0 }
    entry.weight += v.weight
    totals.set(key, entry)
  }
  const result = new Map<string, string>()
  const taken = new Set<string>()
  for (const { label, name, weight } of [...totals.values()].sort((a, b) => b.weight - a.weight)) {
    if (weight <= 0) break
    if (result.has(label) || taken.has(name.toLowerCase())) continue
    result.set(label, name)
    taken.add(name.toLowerCase())
  }
  return result
}
