/**
 * Semantic search: over the caller's whole library (`POST /v1/library/search`) and inside one
 * finished job (`GET /v1/jobs/{job_id}/clips/search`), plus the job's clip candidates
 * (`GET /v1/jobs/{job_id}/clips/candidates`): high-signal moments of 10 to 60 seconds worth
 * cutting into a clip with `POST /v1/jobs/{job_id}/clips`.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { jsonBodyErrors, NotFound, NotReady, pathIdErrors, PaymentRequired, ValidationFailed } from "./Errors.ts"
import { whisperLanguages } from "../domain/Languages.ts"
import { JobIdParam } from "./JobsApi.ts"
import { RequireAccount } from "./Security.ts"

export const searchQueryMaxChars = 500
export const searchMaxLimit = 50
/** Default `min_relevance` (search/Relevance.ts calibrates `relevance` so that 0.5 separates). */
export const defaultMinRelevance = 0.5
/**
 * Latest time a filter takes, in Unix seconds: 9999-12-31T23:59:59Z. Past it a number no longer
 * names a date Postgres or JavaScript can hold (an invalid Date was a 500); earlier than 0 no job exists.
 */
export const maxUnixSeconds = 253_402_300_799

const UnixSeconds = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: maxUnixSeconds }))

/** Shortest and longest clip candidate, in seconds. */
export const candidateLengthLimits = { min: 10, max: 60 } as const

const Question = Schema.String.check(Schema.isBetweenLength(1, searchQueryMaxChars)).annotate({
  description: `A natural-language question or keywords, 1 to ${searchQueryMaxChars} characters (not only spaces).`
})

const Highlights = Schema.Array(Schema.Tuple([Schema.Int, Schema.Int])).annotate({
  description: "`[start, end)` character ranges of `text` sharing a stem with the question's words; often empty " +
    "for a purely semantic match."
})

export const LibrarySearchRequest = Schema.Struct({
  q: Question,
  limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: searchMaxLimit })).annotate({
    description: `Most hits to answer, 1 to ${searchMaxLimit}.`,
    default: 10
  })),
  job_ids: Schema.optionalKey(
    Schema.Array(JobIdParam).check(Schema.isBetweenLength(1, 200)).annotate({ description: "Only these jobs (up to 200)." })
  ),
  // Whisper's codes: a transcript's language is one of them (`haw` and `jw` included).
  language: Schema.optionalKey(Schema.Literals(whisperLanguages).annotate({
    description: "Only transcripts in this language (ISO 639-1, as transcripts report it).",
    message: "language must be an ISO 639-1 code Whisper knows (en, zh, de, es, fr, …; the full list is the enum " +
      "of `language` in /openapi.json)"
  })),
  since: Schema.optionalKey(UnixSeconds.annotate({
    description: `Only jobs created at or after this time (Unix seconds, 0 to ${maxUnixSeconds}).`
  })),
  until: Schema.optionalKey(UnixSeconds.annotate({
    description: `Only jobs created before this time (Unix seconds, 0 to ${maxUnixSeconds}).`
  })),
  min_relevance: Schema.optionalKey(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 })).annotate({
    description: "Hits whose `relevance` is below this are not returned, so a question the library cannot answer " +
      `gets no hits; 0 returns every ranked hit. 0 to 1.`,
    default: defaultMinRelevance
  }))
})
export type LibrarySearchRequest = typeof LibrarySearchRequest.Type

export const SearchHit = Schema.Struct({
  job_id: Schema.String,
  filename: Schema.NullOr(Schema.String),
  start: Schema.Number.annotate({ description: "Seconds: where the moment starts in the recording." }),
  end: Schema.Number,
  text: Schema.String.annotate({ description: "What is said in the moment (the matching sentence or phrase)." }),
  speaker: Schema.NullOr(Schema.String),
  speaker_name: Schema.NullOr(Schema.String).annotate({
    description: "The name given to `speaker` with `PATCH /v1/jobs/{job_id}/speakers`, or null."
  }),
  score: Schema.Number.annotate({ description: "Rank score (fused reciprocal ranks); higher is better, comparable within one answer only." }),
  relevance: Schema.Number.annotate({
    description: "0 to 1, comparable across questions: how well this hit answers the question, from the cosine " +
      "similarity of the question's and the hit's sentence embeddings through a fixed logistic mapping measured " +
      "on the project's own recordings (0.5 at the boundary between right answers and unanswerable questions), " +
      "or at least 0.75 when the hit holds every content word of the question."
  }),
  highlights: Highlights
})
export type SearchHit = typeof SearchHit.Type

export const LibrarySearchAnswer = Schema.Struct({
  hits: Schema.Array(SearchHit),
  query_ms: Schema.Number.annotate({ description: "Milliseconds the search took inside the service." })
})
export type LibrarySearchAnswer = typeof LibrarySearchAnswer.Type

export const CandidateKind = Schema.Literals(["hook", "quote", "question", "insight"]).annotate({
  description: "`hook`: opens with attention-grabbing phrasing; `quote`: a self-contained, quotable statement; " +
    "`question`: a question and the answer that follows it; `insight`: an explanation carrying figures or a reason."
})
export type CandidateKind = typeof CandidateKind.Type

export const ClipCandidate = Schema.Struct({
  start: Schema.Number.annotate({ description: "Seconds; a phrase boundary." }),
  end: Schema.Number.annotate({ description: "Seconds; a phrase boundary, 10 to 60 seconds after `start`." }),
  text: Schema.String,
  kind: CandidateKind,
  score: Schema.Number.annotate({ description: "0 to 1; candidates are sorted by it, best first." }),
  reason: Schema.String.annotate({ description: "The signals that made the moment stand out, in words." })
})
export type ClipCandidate = typeof ClipCandidate.Type

export const ClipCandidatesAnswer = Schema.Struct({ candidates: Schema.Array(ClipCandidate) })
export type ClipCandidatesAnswer = typeof ClipCandidatesAnswer.Type

export const ClipSearchAnswer = Schema.Struct({
  moments: Schema.Array(SearchHit),
  query_ms: Schema.Number
})
export type ClipSearchAnswer = typeof ClipSearchAnswer.Type

const jobErrors = [...pathIdErrors, NotFound, NotReady, PaymentRequired, ValidationFailed] as const

export class LibrarySearchApi extends HttpApiGroup.make("librarySearch")
  .add(
    HttpApiEndpoint.post("search", "/v1/library/search", {
      payload: LibrarySearchRequest,
      success: LibrarySearchAnswer,
      error: [...jsonBodyErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "Search the library",
      description: "Natural-language questions over every finished transcript of the caller's account (never another " +
        "account's), answered with timed moments, best first: each hit is the sentence that matches inside a " +
        "half-overlapping window of 30–45 s of talk, with its own times; hits overlapping within one job are " +
        "merged. Semantic (MiniLM sentence embeddings) and full-text matches are fused by reciprocal rank (`score`); " +
        "each hit also has a `relevance` (0–1, comparable across questions) and hits under `min_relevance` " +
        `(default ${defaultMinRelevance}) are left out, so an unanswerable question gets no hits. Filters: ` +
        "`job_ids`, `language`, `since`/`until` (Unix seconds, on the job's creation). Locked transcripts are left " +
        "out until unlocked. A job is searchable a moment after it finishes or is corrected. 422 for a `q` that is " +
        `empty, only spaces or over ${searchQueryMaxChars} characters, and for any other invalid field.`
    }))
  )
  .middleware(RequireAccount)
  .annotateMerge(OpenApi.annotations({ title: "Search" }))
{}

export class ClipDiscoveryApi extends HttpApiGroup.make("clipDiscovery")
  .add(
    HttpApiEndpoint.get("candidates", "/v1/jobs/:job_id/clips/candidates", {
      params: { job_id: JobIdParam },
      query: { kind: Schema.optionalKey(Schema.Literals(["hook", "quote", "question", "insight", "all"]).annotate({ default: "all" })) },
      success: ClipCandidatesAnswer,
      error: [...jobErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "Suggest clip-worthy moments",
      description: "Moments of 10 to 60 seconds starting and ending on phrase boundaries, not overlapping, best " +
        "first (at most 10). Each is scored 0–1 from: its kind's signal (hook phrasing in the opening words; a " +
        "question followed by its answer; figures, amounts and explanations; a self-contained statement), an " +
        "opening that stands alone (not `and`, `but`, `so`, `it`…), an ending on a complete sentence, centrality " +
        "(how close its meaning is to the recording's as a whole, from sentence embeddings), a lively but clear " +
        "speech rate (words per second) and a duration prior favouring 20–40 s. `kind` narrows to one kind " +
        "(default `all`: each moment labelled with its strongest kind); an unknown kind is 422. 409 NOT_READY " +
        "until the job is done; 402 `transcript_locked` for a locked job."
    })),
    HttpApiEndpoint.get("search", "/v1/jobs/:job_id/clips/search", {
      params: { job_id: JobIdParam },
      query: { q: Question },
      success: ClipSearchAnswer,
      error: [...jobErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "Find moments inside a job",
      description: "The library search restricted to this job: the moments matching `q`, best first (at most 10). " +
        "409 NOT_READY until the job is done; 402 `transcript_locked` for a locked job; 422 for an empty or " +
        `too long \`q\` (1 to ${searchQueryMaxChars} characters).`
    }))
  )
  .middleware(RequireAccount)
  .annotateMerge(OpenApi.annotations({ title: "Clips" }))
{}
