/**
 * Speaker names (issue 23, transcript page): a person names a job's diarization labels
 * (`SPEAKER_00` → "Ana"). The names carry into the transcript downloads (txt, srt, vtt, docx,
 * and `speaker_name` on json segments), the insights and library search hits. Access is the
 * transcript correction's: the job's account key, or a sample's `X-Claim-Token`.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ClaimTokenRequired, jsonBodyErrors, NotFound, NotReady, pathIdErrors } from "./Errors.ts"
import { claimTokenHeader, JobIdParam } from "./JobsApi.ts"
import { AllowGuest } from "./Security.ts"

export const speakerNameMaxChars = 80
/** Labels a request may name at once (diarization finds far fewer). */
export const speakerNamesMaxEntries = 100

/** 1..80 characters, not only spaces, no control characters (a name is one line in every render). */
export const SpeakerNameValue = Schema.String.check(
  Schema.isBetweenLength(1, speakerNameMaxChars),
  Schema.isPattern(/^(?!\s*$)[^\u0000-\u001F\u007F-\u009F]+$/)
).annotate({
  description: `1 to ${speakerNameMaxChars} characters, not only spaces, no control characters (tabs and line breaks included).`
})

export const SpeakerNamesRequest = Schema.Struct({
  names: Schema.Record(Schema.String, Schema.NullOr(SpeakerNameValue)).check(
    Schema.isMaxProperties(speakerNamesMaxEntries)
  ).annotate({
    description: "Label (`SPEAKER_00`, as in the transcript) → name; null forgets the label's name. Labels not " +
      "named here keep theirs. A label the transcript does not have is 422."
  })
})
export type SpeakerNamesRequest = typeof SpeakerNamesRequest.Type

/** `user`: named with this API; `detected`: the recording says it (insights); null: no name. */
export const SpeakerNameSource = Schema.NullOr(Schema.Literals(["user", "detected"]))

export const JobSpeaker = Schema.Struct({
  label: Schema.String.annotate({ description: "`SPEAKER_<nn>`, as in the transcript's segments." }),
  name: Schema.NullOr(Schema.String),
  source: SpeakerNameSource.annotate({
    description: "`user`: given with `PATCH /v1/jobs/{job_id}/speakers` (it wins); `detected`: the recording says it " +
      "(from the stored insights); null: no name."
  })
})
export type JobSpeaker = typeof JobSpeaker.Type

export const SpeakersAnswer = Schema.Struct({
  speakers: Schema.Array(JobSpeaker).annotate({
    description: "The transcript's speakers in order of first appearance; empty when the job was not diarized."
  })
})
export type SpeakersAnswer = typeof SpeakersAnswer.Type

const params = { job_id: JobIdParam }
const errors = [...pathIdErrors, NotFound, ClaimTokenRequired, NotReady] as const

export class SpeakersApi extends HttpApiGroup.make("speakers")
  .add(
    HttpApiEndpoint.get("list", "/v1/jobs/:job_id/speakers", {
      params,
      headers: claimTokenHeader,
      success: SpeakersAnswer,
      error: errors
    }).annotateMerge(OpenApi.annotations({
      summary: "List a job's speakers and their names",
      description: "Each diarization label of the finished transcript with the name it is shown under. 409 NOT_READY " +
        "until the job is done."
    })),
    HttpApiEndpoint.patch("rename", "/v1/jobs/:job_id/speakers", {
      params,
      payload: SpeakerNamesRequest,
      headers: claimTokenHeader,
      success: SpeakersAnswer,
      error: [...errors, ...jsonBodyErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "Name a job's speakers",
      description: "`{ names: { \"SPEAKER_00\": \"Ana\" } }`. Later txt, srt and docx downloads write `Ana: text`, vtt " +
        "`<v Ana>`; json segments carry `speaker_name`; insights show the name (over a detected one) in `speakers[].name` " +
        "and `speaker_name` of summary sentences and quotes; search hits carry `speaker_name`. `null` forgets a name. " +
        "Answers the speakers as `GET` does. 422 (with `detail`) for a label the transcript does not have or a name " +
        `that is empty, only spaces, over ${speakerNameMaxChars} characters or holds a control character.`
    }))
  )
  .middleware(AllowGuest)
  .annotateMerge(OpenApi.annotations({ title: "Speakers" }))
{}
