/**
 * The tools `/mcp` offers an assistant, built from the same Schemas as the REST contract:
 * parameters are the REST request shapes (minus what only HTTP carries), results the REST
 * answers. Every tool runs for the account whose key the request carried (`CurrentAccount`),
 * and a refusal comes back as a tool error whose text is the REST error body
 * `{ "error": sentence, "code": CODE, … }`.
 */
import { Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Usage } from "../api/BillingApi.ts"
import { Clip, ClipIdParam, ClipRequest } from "../api/ClipsApi.ts"
import { InsightsAnswer } from "../api/InsightsApi.ts"
import { ClipCandidatesAnswer, ClipSearchAnswer, LibrarySearchAnswer, LibrarySearchRequest } from "../api/SearchApi.ts"
import { JobIdParam, SubmitOptions } from "../api/JobsApi.ts"
import { CurrentAccount } from "../api/Security.ts"
import { Insights } from "../domain/Insights.ts"
import { JobList, JobStatus, JobView, SubmitAnswer } from "../domain/Job.ts"

/** A refusal as the REST API would send it (its body), so an assistant sees the same code. */
export const ToolFailure = Schema.Struct({
  error: Schema.String,
  code: Schema.String,
  retry_after: Schema.optionalKey(Schema.Number),
  checkout_url: Schema.optionalKey(Schema.String),
  upgrade_url: Schema.optionalKey(Schema.String),
  limit: Schema.optionalKey(Schema.Number),
  running: Schema.optionalKey(Schema.Number)
})
export type ToolFailure = typeof ToolFailure.Type

const common = { failure: ToolFailure, failureMode: "return" as const, dependencies: [CurrentAccount] }

export const SubmitLink = Tool.make("submit_link", {
  ...common,
  description: "Transcribe a public link: direct media, a podcast episode page, or a show page / RSS feed " +
    "(latest episode). Answers the new job's id; poll job_status until done, then read transcript.",
  parameters: Schema.Struct({
    url: Schema.String.check(Schema.isBetweenLength(8, 2000)),
    language: SubmitOptions.fields.language,
    diarize: SubmitOptions.fields.diarize,
    min_speakers: SubmitOptions.fields.min_speakers,
    max_speakers: SubmitOptions.fields.max_speakers,
    speakers_expected: SubmitOptions.fields.speakers_expected,
    word_timestamps: SubmitOptions.fields.word_timestamps,
    prompt: SubmitOptions.fields.prompt,
    task: SubmitOptions.fields.task
  }),
  success: SubmitAnswer
}).annotate(Tool.OpenWorld, true)

export const JobStatusTool = Tool.make("job_status", {
  ...common,
  description: "A job's state: status (queued, processing, done, failed), progress, duration, errors.",
  parameters: Schema.Struct({ job_id: JobIdParam }),
  success: JobView
}).annotate(Tool.Readonly, true)

export const ListJobs = Tool.make("list_jobs", {
  ...common,
  description: "The account's jobs, newest first.",
  parameters: Schema.Struct({
    limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 }))),
    offset: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
    status: Schema.optionalKey(JobStatus)
  }),
  success: JobList
}).annotate(Tool.Readonly, true)

/** Text formats only: docx is a binary document (fetch it over REST). */
export const TextFormat = Schema.Literals(["json", "txt", "srt", "vtt"])

export const TranscriptTool = Tool.make("transcript", {
  ...common,
  description: "A finished job's transcript: json (segments with times; default), txt, srt or vtt. " +
    "A locked job (balance ran out) gives a json preview of its first minute.",
  parameters: Schema.Struct({ job_id: JobIdParam, format: Schema.optionalKey(TextFormat) }),
  success: Schema.Struct({
    job_id: Schema.String,
    format: TextFormat,
    preview: Schema.Boolean,
    text: Schema.String.annotate({ description: "The rendered transcript (for json, the JSON document)." })
  })
}).annotate(Tool.Readonly, true)

export const BalanceTool = Tool.make("balance", {
  ...common,
  description: "Minutes left to transcribe (null when the plan is unlimited), minutes used today and this month, " +
    "and jobs in the queue.",
  success: Usage
}).annotate(Tool.Readonly, true)

export const InsightsTool = Tool.make("insights", {
  ...common,
  // Named from the answer's own fields, so the description cannot promise what the answer lacks.
  description: `A finished job's insights: ${
    Object.keys(Insights.fields).filter((field) => field !== "providers").join(", ")
  } (generated on first call).`,
  parameters: Schema.Struct({ job_id: JobIdParam }),
  success: InsightsAnswer
}).annotate(Tool.Readonly, true)

export const LibrarySearchTool = Tool.make("library_search", {
  ...common,
  description: "Search every finished transcript of the account by meaning and keywords; hits carry the job and the moment.",
  parameters: LibrarySearchRequest,
  success: LibrarySearchAnswer
}).annotate(Tool.Readonly, true)

export const ClipCandidatesTool = Tool.make("clip_candidates", {
  ...common,
  description: "Moments of a finished job that would make good short clips (hooks, quotes, questions, insights).",
  parameters: Schema.Struct({
    job_id: JobIdParam,
    kind: Schema.optionalKey(Schema.Literals(["hook", "quote", "question", "insight", "all"]))
  }),
  success: ClipCandidatesAnswer
}).annotate(Tool.Readonly, true)

export const ClipSearchTool = Tool.make("clip_search", {
  ...common,
  description: "Find the moments of one finished job that match a question or keywords.",
  parameters: Schema.Struct({ job_id: JobIdParam, q: LibrarySearchRequest.fields.q }),
  success: ClipSearchAnswer
}).annotate(Tool.Readonly, true)

export const CreateClip = Tool.make("create_clip", {
  ...common,
  description: "Render a short captioned video clip (1 to 180 s) of a finished job; poll clip_status until video_url is set.",
  parameters: Schema.Struct({ job_id: JobIdParam, ...ClipRequest.fields }),
  success: Clip
})

export const ClipStatus = Tool.make("clip_status", {
  ...common,
  description: "A clip's render status, and its video_url once rendered.",
  parameters: Schema.Struct({ clip_id: ClipIdParam }),
  success: Clip
}).annotate(Tool.Readonly, true)

export const VerbatimTools = Toolkit.make(
  SubmitLink,
  JobStatusTool,
  ListJobs,
  TranscriptTool,
  BalanceTool,
  InsightsTool,
  LibrarySearchTool,
  ClipCandidatesTool,
  ClipSearchTool,
  CreateClip,
  ClipStatus
)
