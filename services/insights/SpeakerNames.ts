/**
 * Names of diarized speakers, from what the recording says. Each cue is a vote for a
 * (speaker label, name) pair, kept with its sentence as evidence:
 *
 * | kind | example | who is named | weight |
 * |---|---|---|---|
 * | self_introduction | "I'm Ana", "my name is Ana", "Ana here", "Hi, this is Ana" | the speaker | 3 |
 * | introduced | "my guest today is Dr. Ruiz", "I'm joined by Tom", "we have Priya on the line", "welcome back, Tom" | the first new voice after the turn | 1.5 |
 * | addressed | "Samuel, how fast…?", "Emma, tell us…", "…, Tom?", "over to you, Tom" | the next speaker | 2 |
 * | greeting | "Thanks, Laura.", "Hello Martin, …", "Thanks for having me, Martin.", "Martin, that is the hard part." (opening a turn) | the previous speaker | 1 |
 *
 * Weaker forms: an introduction naming several people ("joined by Ana and Tom": the i-th name
 * for the i-th new voice), or one whose turn is followed by no new voice (the next speaker),
 * counts 1; an address that is not among the last two sentences of its turn counts 1 (the
 * answer may be to something else); so does an address whose comma the recogniser dropped
 * ("… Tom do your guests complain"), and only for a first name another cue says.
 *
 * A speaker who introduces, addresses or greets a name gets a strong vote (−5) against being it.
 * A first name said alone, or a surname after a title ("Doctor Clarke"), counts for the one full
 * name it belongs to ("Emma" → "Emma Clarke"). Titles are not part of the name.
 *
 * Wrong names are worse than none, so a pair is named only when its total reaches
 * `MIN_SUPPORT` (1.5: one greeting alone is too weak, an introduction is enough), and pairs are
 * taken greedily by total, one name per speaker and one speaker per name; two pairs that compete
 * for a speaker or a name with equal totals name neither. The confidence is
 * `(1 − e^(−total / 2.5)) · total / (total + rivals)`, where rivals are the positive totals of the
 * other names voted for this speaker and of other speakers voted for this name.
 *
 * Names are returned as said in the transcript, so they always occur in it. Names must be
 * capitalised, as Whisper writes them; possessives ("Emma's book") never name anybody.
 */
import type { NameEvidence, NameEvidenceKind } from "../../src/contract/domain/Insights.ts"
import type { Sentence } from "./Sentences.ts"
import { STOPWORDS } from "./Stopwords.ts"

export interface SpeakerIdentity {
  readonly name: string
  /** 0..1 */
  readonly confidence: number
  /** The cues for the name, in spoken order. */
  readonly evidence: ReadonlyArray<NameEvidence>
}

/** Totals below this name nobody. */
export const MIN_SUPPORT = 1.5

const TITLE = String.raw`(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+|(?:Doctor|Professor)\s+)`
const WORD = String.raw`\p{Lu}[\p{L}'’\-]*`
const NAME_BODY = String.raw`${TITLE}?${WORD}(?:\s+${WORD}){0,2}`
const NAME = `(${NAME_BODY})`

/** Capitalised words that follow the cue phrases, or open a sentence, without being names. */
const NOT_NAMES = new Set(
  (
    "sorry glad happy fine good back excited afraid ready curious here there not so very just going pleased " +
    "delighted thrilled honored honoured grateful joined joining today tonight now also the a an our your my this that " +
    "everyone everybody all folks guys listeners friends welcome thanks thank and but okay ok alright listen look wait " +
    "honestly seriously anyway sure great cool wow hmm well yes yeah no right oh actually really please " +
    "doc sir madam mate buddy man dude boss chief team class kids ladies gentlemen mom mum dad god " +
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august " +
    "september october november december " +
    "american canadian british english irish scottish welsh french german italian spanish portuguese dutch swiss " +
    "australian indian chinese japanese korean mexican brazilian african european asian russian polish swedish " +
    "norwegian danish finnish greek turkish jewish muslim catholic christian"
  ).split(/\s+/)
)

const TITLE_WORDS = new Set(["dr", "mr", "mrs", "ms", "prof", "doctor", "professor"])

/** Words that open what is said to someone right after their name ("Emma, tell us…"). */
const ADDRESS_OPENERS = new Set(
  (
    "can could would will do does did is are was were have has should tell walk give explain describe share talk help " +
    "take go please let's you your any"
  ).split(/\s+/)
)
const WH_WORDS = new Set("what how why when where who which".split(" "))
/** What follows a question word in a question ("what do…", "how are…"), not in an exclamation ("how lovely"). */
const QUESTION_SECOND = new Set(
  "is are was were do does did can could would will should have has you about".split(" ")
)

type Target = "self" | "introduced" | "next" | "previous"

interface Cue {
  readonly pattern: RegExp
  readonly kind: NameEvidenceKind
  readonly target: Target
  readonly weight: number
  /** Only in the first sentence of a turn. */
  readonly opening?: boolean
  /** Further names listed right after the first ("… Ana and Tom"). */
  readonly lists?: boolean
  /** An extra check on the match (the text after it). */
  readonly accept?: (rest: string, sentence: string) => boolean
}

const cue = (source: string, options: Omit<Cue, "pattern">): Cue => ({ pattern: new RegExp(source, "gu"), ...options })

const self = { kind: "self_introduction", target: "self", weight: 3 } as const
const introduced = { kind: "introduced", target: "introduced", weight: 1.5, lists: true } as const
const addressed = { kind: "addressed", target: "next", weight: 2 } as const
const greeting = { kind: "greeting", target: "previous", weight: 1, opening: true } as const

/**
 * After a vocative at the start of a sentence: a question, or a word that speaks to someone — not
 * in an exclamation ("Paris, what a city!"). Whisper often ends a question with a full stop.
 */
const isAddress = (rest: string, sentence: string) => {
  if (/\?["'”’)]*$/.test(sentence)) return true
  if (/!["'”’)]*$/.test(sentence)) return false
  const [first = "", second = ""] = rest.trim().toLowerCase().replace(/’/g, "'").split(/[\s,.]+/)
  return ADDRESS_OPENERS.has(first) || (WH_WORDS.has(first) && QUESTION_SECOND.has(second))
}

const CUES: ReadonlyArray<Cue> = [
  cue(String.raw`\b(?:I'm|I’m|I am)\s+${NAME}`, self),
  cue(String.raw`\b[Mm]y name(?:'s|’s| is)\s+${NAME}`, self),
  cue(String.raw`^(?:Hi|Hello|Hey)[,!]?\s+(?:[Tt]his is|[Ii]t's|[Ii]t’s)\s+${NAME}(?=[\s,.!]|$)`, { ...self, opening: true }),
  cue(String.raw`^(?:[Tt]his is|[Ii]t's|[Ii]t’s)\s+${NAME}\s+(?:here|speaking)\b`, { ...self, opening: true }),
  cue(String.raw`^${NAME}\s+here\b`, { ...self, opening: true }),
  cue(String.raw`\b(?:[Mm]y|[Oo]ur) (?:guests?|co-host|cohost|panelists?|speakers?)(?: today| tonight| this week| here| now)? (?:is|are)\s+${NAME}`, introduced),
  cue(String.raw`\b(?:[Jj]oining|[Ww]ith) (?:us|me)(?: today| tonight| now| here| again| in the studio)? (?:is|are)\s+${NAME}`, introduced),
  cue(String.raw`\b[Ww]e (?:also )?have\s+${NAME}\s+(?:on the line|with us|here|joining|in the studio)`, introduced),
  cue(String.raw`\b(?:[Pp]lease|[Ll]et's|[Ll]et’s) welcome\s+${NAME}`, introduced),
  cue(String.raw`\b[Ww]elcome(?: back)?,\s+${NAME}(?=[,.!?]|$)`, introduced),
  cue(String.raw`\b[Jj]oined (?:today |tonight |again |here )?by\s+${NAME}`, introduced),
  cue(String.raw`^(?:(?:So|And|Now|Well|Okay|OK|Right|Alright|But),?\s+)?${NAME},\s+`, { ...addressed, accept: isAddress }),
  cue(String.raw`,\s+${NAME}\?["'”’)]*$`, addressed),
  cue(String.raw`\b(?:[Oo]ver to you|[Yy]our turn|[Gg]o ahead|[Tt]he floor is yours),\s+${NAME}(?=[,.!?]|$)`, addressed),
  cue(
    String.raw`^(?:[Tt]hanks|[Tt]hank you|[Hh]i|[Hh]ello|[Hh]ey|[Gg]ood (?:morning|afternoon|evening)|[Gg]reat question)(?: so much| very much| again)?,?\s+${NAME}(?=[,.!?]|\s+(?:and|it's|it’s|it|great|good|nice|for|thanks|thank|glad|happy)\b|$)`,
    greeting
  ),
  cue(String.raw`^(?:[Tt]hanks|[Tt]hank you)\b[^.!?]*,\s+${NAME}[.!]?$`, greeting),
  // A reply that opens with the name of who just spoke ("Martin, that is the hard part.").
  cue(String.raw`^(?:(?:So|And|Well|Okay|OK|Right|Yes|Yeah|No),?\s+)?${NAME},\s+`, {
    ...greeting,
    accept: (rest, sentence) => !isAddress(rest, sentence)
  })
]

/** The names listed after a cue's first one: ", Ana and Tom", " and by Tom". */
const LISTED = new RegExp(String.raw`^(?:,\s+|\s+and\s+(?:by\s+)?|,\s+and\s+(?:by\s+)?)${NAME}`, "u")

const bare = (word: string) => word.toLowerCase().replace(/[.’']/g, "")

/** Trims titles and non-name words off; null when nothing name-like is left, or for a possessive. */
const cleanName = (raw: string): { name: string; titled: boolean } | null => {
  const words = raw.trim().split(/\s+/)
  let titled = false
  while (words.length > 0 && TITLE_WORDS.has(bare(words[0]!))) {
    words.shift()
    titled = true
  }
  while (words.length > 0) {
    const last = bare(words[words.length - 1]!)
    if (NOT_NAMES.has(last) || STOPWORDS.has(last) || TITLE_WORDS.has(last)) words.pop()
    else break
  }
  if (words.length === 0) return null
  if (words.some((w) => /['’]s$/u.test(w) || w.endsWith("-"))) return null
  const first = words[0]!.toLowerCase().replace(/’/g, "'")
  if (NOT_NAMES.has(first) || STOPWORDS.has(first) || first.length < 2) return null
  return { name: words.join(" "), titled }
}

interface Vote {
  readonly label: string
  readonly name: string
  /** Said after a title ("Doctor Clarke"): a single word is a surname. */
  readonly titled: boolean
  readonly weight: number
  readonly evidence?: NameEvidence
}

interface Turn {
  readonly speaker: string
  readonly sentences: Array<Sentence>
}

const round2 = (x: number) => Math.round(x * 100) / 100

const collectVotes = (turns: ReadonlyArray<Turn>): Array<Vote> => {
  const firstTurn = new Map<string, number>()
  turns.forEach((t, i) => {
    if (!firstTurn.has(t.speaker)) firstTurn.set(t.speaker, i)
  })
  /** The new voices after turn t (speakers whose first turn comes later), in order. */
  const newVoicesAfter = (t: number): Array<string> =>
    turns.slice(t + 1).filter((u, k) => firstTurn.get(u.speaker) === t + 1 + k).map((u) => u.speaker)

  const votes: Array<Vote> = []
  turns.forEach((turn, t) => {
    turn.sentences.forEach((sentence, k) => {
      const lastTwo = k >= turn.sentences.length - 2
      // Two cue patterns matching one phrase ("Thanks, Martin.") are one cue.
      const counted = new Set<string>()
      const push = (vote: Vote) => {
        const key = `${vote.label}\u0000${vote.name.toLowerCase()}\u0000${vote.weight < 0 ? "-" : vote.evidence?.kind}`
        if (counted.has(key)) return
        counted.add(key)
        votes.push(vote)
      }
      for (const c of CUES) {
        if (c.opening === true && k > 0) continue
        for (const m of sentence.text.matchAll(c.pattern)) {
          const rest = sentence.text.slice(m.index + m[0].length)
          if (c.accept !== undefined && !c.accept(rest, sentence.text)) continue
          const names = [cleanName(m[1]!)]
          if (c.lists === true) {
            let tail = rest
            for (let more = tail.match(LISTED); more !== null; more = tail.match(LISTED)) {
              names.push(cleanName(more[1]!))
              tail = tail.slice(more[0].length)
            }
          }
          const found = names.filter((n) => n !== null)
          const evidence: NameEvidence = { kind: c.kind, start: round2(sentence.start), text: sentence.text }
          found.forEach(({ name, titled }, i) => {
            if (c.target !== "self") push({ label: turn.speaker, name, titled, weight: -5 })
            let label: string | undefined
            let weight = c.weight
            switch (c.target) {
              case "self":
                label = turn.speaker
                break
              case "previous":
                label = turns[t - 1]?.speaker
                break
              case "next":
                label = turns[t + 1]?.speaker
                if (!lastTwo) weight = Math.min(weight, 1)
                break
              case "introduced": {
                const fresh = newVoicesAfter(t)
                label = fresh[i] ?? (found.length === 1 ? turns[t + 1]?.speaker : undefined)
                if (found.length > 1 || fresh[i] === undefined) weight = Math.min(weight, 1)
                break
              }
            }
            if (label !== undefined && (c.target === "self" || label !== turn.speaker)) {
              push({ label, name, titled, weight, evidence })
            }
          })
        }
      }
    })
  })
  return votes
}

/** A question or request right after a bare name, with no comma: "… Tom do your guests complain" (not "Tom is right"). */
const UNPUNCTUATED_ADDRESS = new RegExp(
  String.raw`(?:^|\s)(\p{Lu}[\p{L}\-]+)\s+(?=(?:(?:do|does|did|can|could|would|will|is|are|have)\s+(?:you|your|we|there)|what|how|why|when|where|who|tell)\s)`,
  "gu"
)

/**
 * Whisper often drops the comma of a vocative ("… in the studio too Tom do your guests ever
 * complain"). Such an address counts (1, `addressed`, for the next speaker) only for a first name
 * some other cue already says, and only in the last two sentences of a turn: alone, a capitalised
 * word before "do" or "is" is as often a place or a subject.
 */
const unpunctuatedAddresses = (turns: ReadonlyArray<Turn>, votes: ReadonlyArray<Vote>): Array<Vote> => {
  const known = new Map<string, string>()
  for (const v of votes) if (v.weight > 0) known.set(nameWords(v.name)[0]!, v.name.split(/\s+/)[0]!)
  const found: Array<Vote> = []
  turns.forEach((turn, t) => {
    const next = turns[t + 1]?.speaker
    if (next === undefined) return
    turn.sentences.slice(-2).forEach((sentence) => {
      for (const m of sentence.text.matchAll(UNPUNCTUATED_ADDRESS)) {
        const name = known.get(bare(m[1]!))
        if (name === undefined) continue
        const evidence: NameEvidence = { kind: "addressed", start: round2(sentence.start), text: sentence.text }
        found.push({ label: turn.speaker, name, titled: false, weight: -5 })
        found.push({ label: next, name, titled: false, weight: 1, evidence })
      }
    })
  })
  return found
}

const nameWords = (name: string) => name.split(/\s+/).map(bare)

/** The full name a first name (or a titled surname) stands for, when exactly one fits. */
const canonicalizer = (votes: ReadonlyArray<Vote>) => {
  const names = [...new Set(votes.map((v) => v.name))]
  return (vote: Vote): string => {
    const words = nameWords(vote.name)
    const longer = (match: (other: Array<string>) => boolean) =>
      [...new Set(names.filter((n) => nameWords(n).length > words.length && match(nameWords(n))).map((n) => n.toLowerCase()))]
    const opened = longer((ow) => words.every((w, i) => ow[i] === w))
    if (opened.length === 1) return names.find((n) => n.toLowerCase() === opened[0])!
    if (vote.titled && words.length === 1) {
      const ended = longer((ow) => ow[ow.length - 1] === words[0])
      if (ended.length === 1) return names.find((n) => n.toLowerCase() === ended[0])!
    }
    return vote.name
  }
}

interface Pair {
  readonly label: string
  readonly name: string
  weight: number
  readonly evidence: Array<NameEvidence>
}

export const identifySpeakers = (sentences: ReadonlyArray<Sentence>): Map<string, SpeakerIdentity> => {
  const turns: Array<Turn> = []
  for (const s of sentences) {
    if (s.speaker === null) continue
    const last = turns[turns.length - 1]
    if (last !== undefined && last.speaker === s.speaker) last.sentences.push(s)
    else turns.push({ speaker: s.speaker, sentences: [s] })
  }
  const cued = collectVotes(turns)
  const votes = [...cued, ...unpunctuatedAddresses(turns, cued)]
  const canonical = canonicalizer(votes)
  const pairs = new Map<string, Pair>()
  for (const v of votes) {
    const name = canonical(v)
    const key = `${v.label}\u0000${name.toLowerCase()}`
    const pair = pairs.get(key) ?? { label: v.label, name, weight: 0, evidence: [] }
    pair.weight += v.weight
    if (v.evidence !== undefined) pair.evidence.push(v.evidence)
    pairs.set(key, pair)
  }
  const positive = [...pairs.values()].filter((p) => p.weight > 0)
  const sameName = (a: Pair, b: Pair) => a.name.toLowerCase() === b.name.toLowerCase()
  const ranked = positive.filter((p) => p.weight >= MIN_SUPPORT).sort((a, b) => b.weight - a.weight)

  const result = new Map<string, SpeakerIdentity>()
  const taken = new Set<string>()
  for (const pair of ranked) {
    if (result.has(pair.label) || taken.has(pair.name.toLowerCase())) continue
    // An equal rival still in play (for this speaker, or for this name) leaves the question open.
    const tied = ranked.some((o) =>
      o !== pair && o.weight >= pair.weight &&
      ((o.label === pair.label && !sameName(o, pair) && !taken.has(o.name.toLowerCase())) ||
        (sameName(o, pair) && o.label !== pair.label && !result.has(o.label)))
    )
    if (tied) continue
    const rivals = positive
      .filter((o) => o !== pair && (o.label === pair.label) !== sameName(o, pair))
      .reduce((a, o) => a + o.weight, 0)
    const confidence = (1 - Math.exp(-pair.weight / 2.5)) * (pair.weight / (pair.weight + rivals))
    const seen = new Set<string>()
    const evidence = [...pair.evidence]
      .sort((a, b) => a.start - b.start)
      .filter((e) => {
        const key = `${e.kind}\u0000${e.start}\u0000${e.text}`
        return seen.has(key) ? false : (seen.add(key), true)
      })
    result.set(pair.label, { name: pair.name, confidence: round2(confidence), evidence })
    taken.add(pair.name.toLowerCase())
  }
  return result
}

/** The names alone (label → name). */
export const findSpeakerNames = (sentences: ReadonlyArray<Sentence>): Map<string, string> =>
  new Map([...identifySpeakers(sentences)].map(([label, identity]) => [label, identity.name]))
