/**
 * A library for the quality test: the reference transcripts of every recording in
 * shared/media (sentence by sentence with times proportional to length; a08 by its
 * timed turns) and decoy recordings on neighbouring topics.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { mediaDir } from "../support/paths.ts"
import { type Line, sentences, transcriptOf } from "./support.ts"

interface ManifestEntry {
  readonly text: string
  readonly language?: string
  readonly turns?: ReadonlyArray<{ readonly speaker: string; readonly text: string; readonly start?: number; readonly end?: number }>
}

export interface LibraryItem {
  readonly filename: string
  readonly language: string
  readonly transcript: Transcript
}

const manifest = JSON.parse(fs.readFileSync(path.join(mediaDir, "manifest.json"), "utf8")) as Record<string, ManifestEntry>

const fromManifest = (filename: string, entry: ManifestEntry): LibraryItem => {
  const language = entry.language ?? "en"
  const turns = entry.turns
  const lines: Array<Line> = turns === undefined
    ? sentences(entry.text).map((text) => ({ text }))
    : turns.map((t) => ({
      text: t.text,
      speaker: `SPEAKER_${t.speaker}`,
      ...(t.start === undefined ? {} : { start: t.start }),
      ...(t.end === undefined ? {} : { end: t.end })
    }))
  return { filename, language, transcript: transcriptOf(lines, language) }
}

export const mediaLibrary: ReadonlyArray<LibraryItem> = Object.entries(manifest)
  .filter(([, entry]) => entry.text.trim() !== "")
  .map(([filename, entry]) => fromManifest(filename, entry))

const decoy = (filename: string, text: string, language = "en"): LibraryItem => ({
  filename,
  language,
  transcript: transcriptOf(sentences(text).map((t) => ({ text: t })), language)
})

export const decoys: ReadonlyArray<LibraryItem> = [
  decoy(
    "d01_ridge_cooperative.wav",
    "This is the Northfield evening bulletin. The farmers' cooperative has started putting up three tall windmills on the ridge above the village. " +
      "Each machine will feed electricity into the regional grid from next spring. " +
      "The cooperative's chair says the cranes will be on site for another six weeks. " +
      "Some neighbours worry about noise, and a public meeting is planned for the town hall."
  ),
  decoy(
    "d02_backyard_garden.wav",
    "Welcome to Green Thumbs. This week we are planting tomatoes and beans in raised beds. " +
      "Water them early in the morning and mulch the soil so it stays moist. " +
      "Pinch off the side shoots of the tomatoes every few days. " +
      "Next week we will talk about compost and how to keep slugs away from the lettuce."
  ),
  decoy(
    "d03_release_meeting.wav",
    "Let's start the release review. The mobile app build failed twice on Friday. " +
      "We agreed to postpone the launch by one week so the crash can be fixed. " +
      "Marketing will move the announcement to the following Tuesday. " +
      "Please update the tickets before the end of the day."
  ),
  decoy(
    "d04_cooking_show.wav",
    "Today we are making a simple lemon cake. Cream the butter and sugar until pale. " +
      "Add three eggs one at a time, then fold in the flour and the zest of two lemons. " +
      "Bake for forty minutes and let it cool before you pour the glaze over it."
  ),
  decoy(
    "d05_harbour_repairs.wav",
    "The harbour master gave an update on the pier. Divers found cracks in the old concrete pillars. " +
      "Repairs will close the fishing dock for most of the summer. " +
      "Boats will be moored at the marina on the east side until the work is finished."
  ),
  decoy(
    "d06_partido.wav",
    "El equipo local ganó el partido del domingo por dos goles a uno. " +
      "El entrenador dijo que los jugadores estaban cansados después del viaje. " +
      "El próximo partido será en el estadio nuevo dentro de dos semanas.",
    "es"
  ),
  decoy(
    "d07_school_board.wav",
    "The school board met on Monday night. Parents asked for more crossing guards near the primary school. " +
      "The board voted to repaint the gym and replace the old heating system over the winter break. " +
      "Bus routes will not change this year."
  )
]

export const qualityLibrary: ReadonlyArray<LibraryItem> = [...mediaLibrary, ...decoys]

/** Every recording whose reference text is the given one (a01 and a06 say the same). */
export const recordingsSaying = (fragment: string): ReadonlyArray<string> =>
  qualityLibrary.filter((item) => item.transcript.text.includes(fragment)).map((item) => item.filename)

/** library-quality.test.ts's questions: each with the recording and moment that answer it. */
export interface Case {
  readonly q: string
  /** A sentence of the target recording: every recording saying it counts as right. */
  readonly recording: string
  /** The top hit's text must contain this (the moment, not just the recording). */
  readonly moment: string
  /** For timed turns: the moment's own times. */
  readonly times?: readonly [number, number]
}

export const cases: ReadonlyArray<Case> = [
  { q: "when is the library open", recording: "The library closes at nine", moment: "reading room opens again at seven" },
  { q: "who is building wind turbines", recording: "three tall windmills", moment: "windmills on the ridge" },
  { q: "what did they decide about hiring", recording: "new hiring plan", moment: "decide on the new hiring plan" },
  { q: "how fast is the shoreline retreating each year", recording: "Welcome back to Coastline", moment: "two meters of cliff every year", times: [18.93, 28.0] },
  { q: "what is the price of building barriers against the ocean", recording: "Welcome back to Coastline", moment: "twenty thousand dollars per meter", times: [32.9, 40.73] },
  { q: "who plants vegetation on the sandy hills every weekend", recording: "Welcome back to Coastline", moment: "volunteers plant dune grass", times: [47.83, 57.41] },
  { q: "who is the scientist on the show", recording: "Welcome back to Coastline", moment: "a geologist who studies coastal erosion", times: [0.3, 10.04] },
  { q: "how much land can a single bad night take away", recording: "Welcome back to Coastline", moment: "ten meters in a single night", times: [18.93, 28.0] },
  { q: "should I expect a downpour this evening", recording: "heavy rain across the northern valleys", moment: "heavy rain" },
  { q: "what has to change in the agreement before signing", recording: "draft contract", moment: "payment terms need another look" },
  { q: "what keeps community journalism going", recording: "rebuilding their local newspapers", moment: "local newspapers" },
  { q: "¿Qué día abre el mercado?", recording: "El mercado abre", moment: "El mercado abre todos los sábados" },
  { q: "¿Dónde puedo comprar verduras frescas de la zona?", recording: "El mercado abre", moment: "verduras" }
]

/**
 * Questions the library cannot answer: with the default `min_relevance` they get no hit.
 * Measured: 5 of 6 (0.83). The miss is kept in the list, so the rate is what is held:
 * "chocolate cake" meets a lemon cake recipe at cosine 0.44, as close as right answers are.
 */
export const unanswerable: ReadonlyArray<string> = [
  "stock market crash in Tokyo",
  "who won the football world cup in 1998",
  "how do I reset my router password",
  "what is the recipe for chocolate cake",
  "when was the Eiffel Tower built",
  "¿Cuál es la capital de Australia?"
]
export const NO_HIT_RATE = 5 / 6

/**
 * Indexes every item of `qualityLibrary` for the account under a new job id each, through
 * `index` (a `SearchIndex`); returns job id → filename.
 */
export const indexQualityLibrary = <E, R>(
  indexJob: (accountId: string, jobId: string, meta: { filename: string; language: string; created_at: Date }, transcript: Transcript) => Effect.Effect<number, E, R>,
  accountId: string
): Effect.Effect<Map<string, string>, E, R> =>
  Effect.gen(function*() {
    const ids = new Map<string, string>()
    for (const item of qualityLibrary) {
      const jobId = randomUUID()
      ids.set(jobId, item.filename)
      yield* indexJob(accountId, jobId, { filename: item.filename, language: item.language, created_at: new Date() }, item.transcript)
    }
    return ids
  })
