/**
 * Transcripts built from the reference texts of `shared/media/manifest.json`, as the pipeline
 * would store them: `a08` turn by turn with its manifest times and speaker labels in order of
 * first appearance; other clips one segment each, timed at a steady speaking rate.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { Segment, Transcript } from "../../src/contract/domain/Transcript.ts"

export const sharedDir = path.resolve(import.meta.dirname, "../../../shared")
export const modelsDir = path.join(sharedDir, "models")

interface Turn {
  readonly speaker: string
  readonly text: string
  readonly start?: number
  readonly end?: number
}
interface Entry {
  readonly kind: string
  readonly text: string
  readonly turns?: ReadonlyArray<Turn>
  readonly names?: Readonly<Record<string, string>>
}

export const manifest: Record<string, Entry> = JSON.parse(
  fs.readFileSync(path.join(sharedDir, "media/manifest.json"), "utf8")
)

export const A08 = "a08_interview_three_speakers.wav"

const transcriptOf = (segments: ReadonlyArray<Segment>): Transcript => ({
  text: segments.map((s) => s.text).join(" "),
  language: "en",
  duration: segments.length === 0 ? 0 : segments[segments.length - 1]!.end + 0.5,
  speech_detected: segments.length > 0,
  segments
})

/** Speaker letter → `SPEAKER_<nn>` in order of first appearance. */
export const labelsOf = (turns: ReadonlyArray<Turn>): Map<string, string> => {
  const labels = new Map<string, string>()
  for (const t of turns) {
    if (!labels.has(t.speaker)) labels.set(t.speaker, `SPEAKER_${String(labels.size).padStart(2, "0")}`)
  }
  return labels
}

/** Words of a segment timed evenly over it (what `word_timestamps=true` adds). */
const evenWords = (text: string, start: number, end: number) => {
  const words = text.split(/\s+/).filter((w) => w.length > 0)
  const step = (end - start) / words.length
  return words.map((w, i) => ({ start: start + i * step, end: start + (i + 1) * step, text: w }))
}

/** a08 as a diarized transcript: one segment per manifest turn. */
export const a08Transcript = (options: { readonly diarized?: boolean; readonly words?: boolean } = {}): Transcript => {
  const turns = manifest[A08]!.turns!
  const labels = labelsOf(turns)
  return transcriptOf(turns.map((t) => ({
    start: t.start!,
    end: t.end!,
    text: t.text,
    speaker: options.diarized === false ? null : labels.get(t.speaker)!,
    ...(options.words === true ? { words: evenWords(t.text, t.start!, t.end!) } : {})
  })))
}

/** Texts of the speech and dialogue clips, each once (the single-voice files and their variants share texts). */
export const distinctTexts = (): Array<string> =>
  [...new Set(Object.values(manifest).filter((e) => e.kind === "speech" || e.kind === "dialogue").map((e) => e.text))]

/** Undiarized transcript of `texts` in order, one segment per text at 2.5 words per second with 0.6 s gaps. */
export const textsTranscript = (texts: ReadonlyArray<string>): Transcript => {
  let at = 0
  const segments: Array<Segment> = []
  for (const text of texts) {
    const seconds = text.split(/\s+/).length / 2.5
    segments.push({ start: at, end: at + seconds, text, speaker: null })
    at += seconds + 0.6
  }
  return transcriptOf(segments)
}

/** Diarized transcript of `turns` (speaker letters → `SPEAKER_<nn>`), one segment per turn at 2.5 words per second. */
export const dialogueTranscript = (turns: ReadonlyArray<Turn>): Transcript => {
  const labels = labelsOf(turns)
  let at = 0
  const segments: Array<Segment> = []
  for (const t of turns) {
    const seconds = t.text.split(/\s+/).length / 2.5
    segments.push({ start: at, end: at + seconds, text: t.text, speaker: labels.get(t.speaker)! })
    at += seconds + 0.6
  }
  return transcriptOf(segments)
}

/**
 * A radio panel where names come from how people address each other: the host introduces
 * himself and a guest who has not spoken yet, the guest greets the host by first name, the host
 * addresses the guest and later a third voice ("Tom, …?") who is never introduced. Emma's name
 * is also said in passing by Tom ("I read Emma's book"), which names nobody.
 */
export const PANEL: ReadonlyArray<Turn> = [
  { speaker: "A", text: "Good evening and welcome to Night Shift, the programme about people who work while we sleep. I'm Martin Hale, and tonight I'm joined by Doctor Emma Clarke, who studies sleep at the university." },
  { speaker: "B", text: "Hello Martin, and hello to everyone listening." },
  { speaker: "A", text: "Emma, can you tell us why night workers sleep so badly during the day?" },
  { speaker: "B", text: "The body clock expects darkness and rest at night, so sleep in daylight is shorter and lighter. A study from Denmark found exactly that." },
  { speaker: "A", text: "We have a night porter from a city hotel in the studio too. Tom, do guests ever complain?" },
  { speaker: "C", text: "All the time. They ring the desk at three in the morning about the noise from the street, and I read Emma's book on the night bus home." },
  { speaker: "A", text: "Thanks, Tom. Emma, is there anything hotels could do better?" },
  { speaker: "B", text: "Darker rooms and quieter corridors would help the guests and the staff." },
  { speaker: "A", text: "That is all for tonight. Thank you both for joining me." }
]
export const PANEL_NAMES: Readonly<Record<string, string>> = { A: "Martin Hale", B: "Emma Clarke", C: "Tom" }

/**
 * A beekeeping panel (issue 24): a host who frames and asks, two guests whose answers carry the
 * facts. `BEES_FACTS` are the facts a summary should carry (each a phrase of the guests' words);
 * `BEES_NAMES` and `BEES_UNITS` must never be topics; reactions open some answers.
 */
export const BEES: ReadonlyArray<Turn> = [
  { speaker: "A", text: "Welcome back to the show, everyone. Thanks for joining us on this sunny afternoon." },
  { speaker: "A", text: "Today we are talking about urban beekeeping with Tom and Grace, who keep hives on city roofs." },
  { speaker: "A", text: "Tom, what kills urban beehives most often?" },
  { speaker: "B", text: "Pesticides. Pesticides sprayed in parks and private gardens kill more urban beehives than any disease we see, and most of that spraying happens in early spring when the colonies are weakest." },
  { speaker: "A", text: "That is frightening. Grace, do rooftop hives produce less honey than country hives?" },
  { speaker: "C", text: "Never. A rooftop hive in our city makes twice the honey of a country hive, because street trees and balcony flowers bloom from March to October." },
  { speaker: "A", text: "How much honey did your rooftop hives make last year?" },
  { speaker: "C", text: "Our twelve rooftop hives filled 300 jars of honey last summer, and we sold every jar at the farmers market." },
  { speaker: "A", text: "Does the height of the roof matter for the bees?" },
  { speaker: "B", text: "Yes. Above forty meters the wind is too strong, so we decided to keep every hive below twenty meters and to put a windbreak beside it." },
  { speaker: "A", text: "And what should a beginner in urban beekeeping do first?" },
  { speaker: "C", text: "Join a local beekeeping club before buying a hive, because ninety percent of new keepers who take a course keep their colonies alive through the first winter." },
  { speaker: "A", text: "Great advice. Thank you both for joining us today, and goodbye everyone." }
]
export const BEES_FACTS: ReadonlyArray<string> = ["pesticides", "twice the honey", "300 jars", "twenty meters", "local beekeeping club"]
export const BEES_NAMES: ReadonlyArray<string> = ["tom", "grace"]
export const BEES_UNITS: ReadonlyArray<string> = ["meters", "meter", "percent"]
