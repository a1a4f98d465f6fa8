/**
 * `GET` and `PATCH /v1/jobs/{job_id}/speakers` as use cases: a finished job's diarization labels
 * and the names they are shown under. Access mirrors the transcript correction: the caller's
 * job (another account's is 404; a sample with its claim token), 409 NOT_READY before it is
 * done; a locked job may be named like it may be corrected (nothing of the transcript is shown).
 */
import { Context, Effect, Layer, Option } from "effect"
import { type ClaimTokenRequired, type NotFound, type NotReady, ValidationFailed } from "../../src/contract/api/Errors.ts"
import type { Caller } from "../../src/contract/api/Security.ts"
import type { SpeakersAnswer } from "../../src/contract/api/SpeakersApi.ts"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { JobAccess } from "../access/JobAccess.ts"
import { InsightsStore, transcriptHash } from "../insights/InsightsStore.ts"
import type { JobRecord } from "../jobs/JobRecord.ts"
import { TranscriptAccess } from "../transcripts/TranscriptAccess.ts"
import { SpeakerNameStore } from "./SpeakerNameStore.ts"

/** The transcript's speaker labels in order of first appearance. */
export const speakerLabels = (transcript: Transcript): Array<string> => {
  const labels = new Set<string>()
  for (const segment of transcript.segments) if (segment.speaker !== null) labels.add(segment.speaker)
  for (const segment of transcript.segments) for (const word of segment.words ?? []) if (word.speaker) labels.add(word.speaker)
  return Array.from(labels)
}

export class JobSpeakers extends Context.Service<JobSpeakers, {
  list(caller: Caller, jobId: JobId): Effect.Effect<SpeakersAnswer, NotFound | ClaimTokenRequired | NotReady>
  /** Label → name (trimmed), or null to forget it; labels not given keep their names. */
  rename(
    caller: Caller,
    jobId: JobId,
    names: Readonly<Record<string, string | null>>
  ): Effect.Effect<SpeakersAnswer, NotFound | ClaimTokenRequired | NotReady | ValidationFailed>
}>()("verbatim/speakers/JobSpeakers") {
  static readonly layer = Layer.effect(
    JobSpeakers,
    Effect.gen(function*() {
      const access = yield* JobAccess
      const transcripts = yield* TranscriptAccess
      const store = yield* SpeakerNameStore
      const insights = yield* InsightsStore

      /** Names the recording says (stored insights of this very transcript), by label. */
      const detected = Effect.fnUntraced(function*(job: JobRecord, transcript: Transcript) {
        const stored = yield* insights.get(job.id)
        if (job.locked || Option.isNone(stored) || stored.value.transcriptHash !== transcriptHash(transcript)) {
          return new Map<string, string>()
        }
        const outcome = stored.value.outcome
        if (outcome._tag !== "Done") return new Map<string, string>()
        return new Map(outcome.insights.speakers.flatMap((s) => s.name === null ? [] : [[s.label, s.name] as const]))
      })

      const answer = Effect.fnUntraced(function*(job: JobRecord, transcript: Transcript) {
        const given = yield* store.get(job.id)
        const found = yield* detected(job, transcript)
        return {
          speakers: speakerLabels(transcript).map((label) => {
            const user = given.get(label)
            if (user !== undefined) return { label, name: user, source: "user" as const }
            const heard = found.get(label)
            return heard !== undefined
              ? { label, name: heard, source: "detected" as const }
              : { label, name: null, source: null }
          })
        }
      })

      const list = Effect.fn("JobSpeakers.list")(function*(caller: Caller, jobId: JobId) {
        const job = yield* access.load(caller, jobId)
        return yield* answer(job, yield* transcripts.ready(job))
      })

      const rename = Effect.fn("JobSpeakers.rename")(
        function*(caller: Caller, jobId: JobId, names: Readonly<Record<string, string | null>>) {
          const job = yield* access.load(caller, jobId)
          const transcript = yield* transcripts.ready(job)
          const labels = speakerLabels(transcript)
          const unknown = Object.keys(names).filter((label) => !labels.includes(label))
          if (unknown.length > 0) {
            const known = labels.length === 0 ? "it has no speakers (the job was not diarized)" : `its speakers are ${labels.join(", ")}`
            return yield* new ValidationFailed({
              error: `The transcript has no speaker ${unknown.join(", ")}: ${known}.`,
              code: "VALIDATION_FAILED",
              detail: unknown.map((label) => ({ loc: ["body", "names", label], msg: "No such speaker in the transcript" }))
            })
          }
          yield* store.set(job.id, Object.entries(names).map(([label, name]) => ({ label, name: name === null ? null : name.trim() })))
          return yield* answer(job, transcript)
        }
      )

      return JobSpeakers.of({ list, rename })
    })
  )
}
