/**
 * The insights of one finished transcript (`GET /v1/jobs/{job_id}/insights` answers
 * `{ insights: Insights }`). Stored as JSON once generated and served from the store afterwards,
 * so one Schema serves the stored row and the API answer.
 *
 * Times are seconds from the start of the source media, like the transcript's segments.
 * `speaker` is the diarization label (`SPEAKER_<nn>`) or null when the job was not diarized;
 * `speaker_name` is the name the recording gives that speaker, or null when it never says it.
 */
import { Schema } from "effect"

/**
 * Who produced a field: `extractive` (sentence embeddings over the transcript, no network,
 * always available) or `llm` (an OpenAI-compatible chat endpoint configured by the operator,
 * used only when its answer passed the grounding check against the transcript).
 */
export const InsightsProvider = Schema.Literals(["extractive", "llm"])
export type InsightsProvider = typeof InsightsProvider.Type

const Seconds = Schema.Finite.annotate({ description: "Seconds from the start of the media." })
const SpeakerLabel = Schema.NullOr(Schema.String).annotate({ description: "`SPEAKER_<nn>`, or null without diarization." })
const SpeakerName = Schema.NullOr(Schema.String).annotate({ description: "The name the recording gives the speaker, or null." })

/** A sentence with the passage of the recording it comes from and who said it. */
const SpokenSentence = Schema.Struct({
  text: Schema.String,
  start: Seconds,
  end: Seconds,
  speaker: SpeakerLabel,
  speaker_name: SpeakerName
})

/** One summary sentence: said verbatim (`extractive`), or written by the LLM and timed by its evidence (`llm`). */
export const SummarySentence = SpokenSentence.annotate({ identifier: "SummarySentence" })
export type SummarySentence = typeof SummarySentence.Type

export const Summary = Schema.Struct({
  /** The sentences joined with spaces, in spoken order. */
  text: Schema.String,
  sentences: Schema.Array(SummarySentence)
})
export type Summary = typeof Summary.Type

export const TopicOccurrence = Schema.Struct({ start: Seconds, end: Seconds })
export type TopicOccurrence = typeof TopicOccurrence.Type

/** A key phrase of 1–3 words; `weight` is 1 for the strongest topic and smaller for the others. */
export const Topic = Schema.Struct({
  phrase: Schema.String,
  weight: Schema.Finite.annotate({ description: "0..1, relative to the strongest topic." }),
  count: Schema.Int.annotate({ description: "Times the phrase (or its singular/plural) is said." }),
  occurrences: Schema.Array(TopicOccurrence).annotate({ description: "Where it is said (the first 20)." })
})
export type Topic = typeof Topic.Type

/** A sentence said verbatim in the recording, self-contained (no dangling "and/so/it…" opening). */
export const Quote = SpokenSentence.annotate({ identifier: "Quote" })
export type Quote = typeof Quote.Type

/**
 * One cue the speaker's name rests on: the speaker introducing themself ("I'm Emma Clarke"),
 * being introduced by another ("joined by Doctor Emma Clarke", naming the next new voice),
 * addressed by name in the turn before their own ("Emma, can you…?"), or greeted or thanked by
 * name in the turn after it ("Hello Martin", "Thanks, Emma").
 */
export const NameEvidenceKind = Schema.Literals(["self_introduction", "introduced", "addressed", "greeting"])
export type NameEvidenceKind = typeof NameEvidenceKind.Type

export const NameEvidence = Schema.Struct({
  kind: NameEvidenceKind,
  start: Seconds.annotate({ description: "Start of the sentence holding the cue." }),
  text: Schema.String.annotate({ description: "The sentence holding the cue, verbatim." })
})
export type NameEvidence = typeof NameEvidence.Type

/** One diarized speaker. Empty list when the job was not diarized. */
export const SpeakerInsight = Schema.Struct({
  label: Schema.String,
  name: SpeakerName,
  name_confidence: Schema.NullOr(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 }))).annotate({
    description: "0..1, how strongly the cues support `name` over any other name and speaker; null without a name."
  }),
  name_evidence: Schema.Array(NameEvidence).annotate({
    description: "The cues for `name`, in spoken order; empty without a name."
  }),
  talk_time: Schema.Finite.annotate({ description: "Seconds of the speaker's segments." }),
  share: Schema.Finite.annotate({ description: "0..1, talk_time over the talk time of all speakers." }),
  turns: Schema.Int.annotate({ description: "Runs of consecutive segments by this speaker." })
})
export type SpeakerInsight = typeof SpeakerInsight.Type

/** A stretch of the recording on one topic (topic segmentation), in spoken order. */
export const Chapter = Schema.Struct({
  title: Schema.String,
  /** The chapter's most representative sentence, verbatim. */
  gist: Schema.String,
  start: Seconds,
  end: Seconds,
  speakers: Schema.Array(Schema.String).annotate({ description: "Labels (or names when known) heard in the chapter." })
})
export type Chapter = typeof Chapter.Type

export const InsightsProviders = Schema.Struct({
  summary: InsightsProvider,
  topics: InsightsProvider,
  quotes: InsightsProvider,
  speakers: InsightsProvider,
  chapters: InsightsProvider
})
export type InsightsProviders = typeof InsightsProviders.Type

export const Insights = Schema.Struct({
  summary: Summary,
  topics: Schema.Array(Topic),
  quotes: Schema.Array(Quote),
  speakers: Schema.Array(SpeakerInsight),
  chapters: Schema.Array(Chapter),
  providers: InsightsProviders
})
export type Insights = typeof Insights.Type
