/**
 * Talk time, share and turns per diarized speaker, from the transcript's segments (a turn is a
 * run of consecutive segments by one speaker). Segments without a speaker are not counted;
 * a transcript with no speaker labels has no speakers. Listed in order of first appearance, with
 * the name, confidence and evidence `SpeakerNames.ts` found (null and empty without a name).
 */
import type { SpeakerInsight } from "../../src/contract/domain/Insights.ts"
import type { Segment } from "../../src/contract/domain/Transcript.ts"
import type { SpeakerIdentity } from "./SpeakerNames.ts"

export const speakerStats = (
  segments: ReadonlyArray<Segment>,
  identities: ReadonlyMap<string, SpeakerIdentity>
): Array<SpeakerInsight> => {
  const stats = new Map<string, { talk: number; turns: number }>()
  let previous: string | null = null
  for (const segment of segments) {
    const label = segment.speaker
    if (label === null || segment.text.trim().length === 0) continue
    const entry = stats.get(label) ?? { talk: 0, turns: 0 }
    entry.talk += Math.max(0, segment.end - segment.start)
    if (label !== previous) entry.turns += 1
    stats.set(label, entry)
    previous = label
  }
  const total = [...stats.values()].reduce((a, s) => a + s.talk, 0)
  return [...stats.entries()].map(([label, s]) => ({
    label,
    name: identities.get(label)?.name ?? null,
    name_confidence: identities.get(label)?.confidence ?? null,
    name_evidence: identities.get(label)?.evidence ?? [],
    talk_time: Math.round(s.talk * 100) / 100,
    share: total > 0 ? Math.round((s.talk / total) * 1000) / 1000 : 0,
    turns: s.turns
  }))
}
