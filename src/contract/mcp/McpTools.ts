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
import { JobIdParam, SubmitOptions } from "../api/JobsApi.ts"
import { CurrentAccount } from "../api/Security.ts"
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
    word_timestamps: SubmitOptions.fields.word_timestamps
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

export const VerbatimTools = Toolkit.make(SubmitLink, JobStatusTool, ListJobs, TranscriptTool, BalanceTool)
