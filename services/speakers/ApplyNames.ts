/**
 * Speaker names a person gave (SpeakerNameStore) applied to what is read: a transcript's
 * segments gain `speaker_name`; insights show the person's name in place of a detected one.
 * Applied at read time, never stored, so renaming needs no regeneration and a stored
 * transcript or insights payload never holds a stale name.
 */
import type { Insights, SpeakerInsight } from "../../src/contract/domain/Insights.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import type { SpeakerNameMap } from "./SpeakerNameStore.ts"

/** Diarized segments carry `speaker_name` (null when unnamed); segments without a speaker are unchanged. */
export const nameSegments = (transcript: Transcript, names: SpeakerNameMap): Transcript => ({
  ...transcript,
  segments: transcript.segments.map((segment) =>
    segment.speaker === null ? segment : { ...segment, speaker_name: names.get(segment.speaker) ?? null }
  )
})

/**
 * The person's name wins over the detected one. A detected name's confidence and cues no longer
 * describe the name shown, so they are cleared when the two differ.
 */
const nameSpeaker = (speaker: SpeakerInsight, names: SpeakerNameMap): SpeakerInsight => {
  const given = names.get(speaker.label)
  if (given === undefined || given === speaker.name) return speaker
  return { ...speaker, name: given, name_confidence: null, name_evidence: [] }
}

export const nameInsights = (insights: Insights, names: SpeakerNameMap): Insights => {
  if (names.size === 0) return insights
  // Chapters list labels, or the detected name where there was one.
  const shownAs = new Map<string, string>()
  for (const speaker of insights.speakers) {
    const given = names.get(speaker.label)
    if (given === undefined) continue
    shownAs.set(speaker.label, given)
    if (speaker.name !== null) shownAs.set(speaker.name, given)
  }
  for (const [label, name] of names) shownAs.set(label, name)
  const sentence = <S extends { readonly speaker: string | null; readonly speaker_name: string | null }>(s: S): S =>
    s.speaker !== null && names.has(s.speaker) ? { ...s, speaker_name: names.get(s.speaker)! } : s
  return {
    ...insights,
    summary: { ...insights.summary, sentences: insights.summary.sentences.map(sentence) },
    quotes: insights.quotes.map(sentence),
    speakers: insights.speakers.map((speaker) => nameSpeaker(speaker, names)),
    chapters: insights.chapters.map((chapter) => ({
      ...chapter,
      speakers: Array.from(new Set(chapter.speakers.map((s) => shownAs.get(s) ?? s)))
    }))
  }
}
