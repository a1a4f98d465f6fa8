/**
 * Speaker hints of a submit (`min_speakers`, `max_speakers`, or `speakers_expected` for both):
 * how many speakers diarization should find. The schema bounds each to 1..20; the rules across
 * fields are here, shared by every submit path: hints need `diarize=true`, `speakers_expected`
 * does not combine with the other two, and `min_speakers` may not exceed `max_speakers`.
 * The diarizer honours them by where it cuts its dendrogram (pipeline/diarize/Clustering.ts).
 */
import { Effect } from "effect"
import { ValidationFailed } from "../../src/contract/api/Errors.ts"

export interface SpeakerHintFields {
  readonly diarize?: boolean | undefined
  readonly min_speakers?: number | undefined
  readonly max_speakers?: number | undefined
  readonly speakers_expected?: number | undefined
}

/** What a job stores: null where no bound was asked for. */
export interface SpeakerHints {
  readonly minSpeakers: number | null
  readonly maxSpeakers: number | null
}

const refuse = (error: string, loc: ReadonlyArray<string | number>, msg: string) =>
  new ValidationFailed({ error, code: "VALIDATION_FAILED", detail: [{ loc: [...loc], msg }] })

/** The job's bounds, or a 422 naming the field at fault (under `at`, e.g. `["body"]`). */
export const checkSpeakerHints = (
  options: SpeakerHintFields,
  at: ReadonlyArray<string | number> = ["body"]
): Effect.Effect<SpeakerHints, ValidationFailed> => {
  const given = (["min_speakers", "max_speakers", "speakers_expected"] as const).filter((name) => options[name] !== undefined)
  if (given.length === 0) return Effect.succeed({ minSpeakers: null, maxSpeakers: null })
  if (options.diarize !== true) {
    return Effect.fail(refuse(
      `${given.join(", ")} tell diarization how many speakers there are: send diarize=true with them.`,
      [...at, given[0]!],
      "Needs diarize=true"
    ))
  }
  if (options.speakers_expected !== undefined) {
    if (given.length > 1) {
      return Effect.fail(refuse(
        "Send either speakers_expected or min_speakers/max_speakers, not both.",
        [...at, given.find((name) => name !== "speakers_expected")!],
        "Not with speakers_expected"
      ))
    }
    return Effect.succeed({ minSpeakers: options.speakers_expected, maxSpeakers: options.speakers_expected })
  }
  if (options.min_speakers !== undefined && options.max_speakers !== undefined && options.min_speakers > options.max_speakers) {
    return Effect.fail(refuse(
      `min_speakers (${options.min_speakers}) is above max_speakers (${options.max_speakers}).`,
      [...at, "min_speakers"],
      "Above max_speakers"
    ))
  }
  return Effect.succeed({ minSpeakers: options.min_speakers ?? null, maxSpeakers: options.max_speakers ?? null })
}
