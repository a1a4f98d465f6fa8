/**
 * The stored transcript of a job and its JSON rendering (`GET /v1/jobs/{id}/result?format=json`).
 * One Schema serves the database row (stored as JSON) and the API answer, because they coincide.
 */
import { Schema } from "effect"

/**
 * A word with its own timing; present only when `word_timestamps=true` was requested.
 * `speaker` (`SPEAKER_<nn>`) is present once diarization labelled the word.
 */
export const Word = Schema.Struct({
  start: Schema.Finite,
  end: Schema.Finite,
  text: Schema.String,
  speaker: Schema.optionalKey(Schema.NullOr(Schema.String)),
  confidence: Schema.optionalKey(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 })).annotate({
    description: "0..1: how sure the recogniser was of this word — the mean probability of its tokens " +
      "(softmax over the text vocabulary at the step that chose each). Absent on transcripts made before it existed."
  }))
})
export type Word = typeof Word.Type

/**
 * One spoken phrase (one SRT/VTT cue). Times are seconds from the start of the source media.
 * `speaker` is `SPEAKER_<nn>` once diarization ran, otherwise null.
 */
export const Segment = Schema.Struct({
  start: Schema.Finite,
  end: Schema.Finite,
  text: Schema.String,
  speaker: Schema.NullOr(Schema.String),
  /**
   * The name a person gave `speaker` (`PATCH /v1/jobs/{job_id}/speakers`), null while it has
   * none; present on diarized segments of an answer, never stored with the transcript.
   */
  speaker_name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  words: Schema.optionalKey(Schema.Array(Word))
})
export type Segment = typeof Segment.Type

export const Transcript = Schema.Struct({
  text: Schema.String,
  language: Schema.NullOr(Schema.String),
  duration: Schema.Finite,
  speech_detected: Schema.Boolean,
  segments: Schema.Array(Segment)
})
export type Transcript = typeof Transcript.Type

/** The renderings of one stored transcript; every format comes from the same stored result. */
export const TranscriptFormat = Schema.Literals(["json", "txt", "srt", "vtt", "docx"])
export type TranscriptFormat = typeof TranscriptFormat.Type
