/**
 * A library for the quality test: the reference transcripts of every recording in
 * shared/media (sentence by sentence with times proportional to length; a08 by its
 * timed turns) and decoy recordings on neighbouring topics.
 */
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
