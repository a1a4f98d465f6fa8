/**
 * `verbatim/client`: a typed client for the Verbatim API.
 *
 * ```ts
 * import { createClient } from "verbatim/client"
 * const verbatim = createClient({ baseUrl: "http://127.0.0.1:8080", apiKey: process.env.VERBATIM_KEY })
 * const { job_id } = await verbatim.submitFile({ path: "meeting.m4a" }, { options: { language: "en" } })
 * const job = await verbatim.waitForJob(job_id)
 * const transcript = await verbatim.result(job_id)
 * ```
 *
 * Effect users take `makeClient` and the helpers directly (they need an `HttpClient`, e.g.
 * `FetchHttpClient.layer`).
 */
export { type ClientOptions, makeClient, type VerbatimApi, type VerbatimClient } from "./Client.ts"
export { uploadDirect } from "./DirectUpload.ts"
export { type Media, type MediaInput, MediaUnreadable, openMedia } from "./Media.ts"
export { JobWaitTimedOut, minimumPollSeconds, waitForJob, type WaitOptions } from "./Polling.ts"
export { onApiRoot, playbackUrl } from "./Playback.ts"
export { createClient, type PromiseClient } from "./PromiseClient.ts"
export { submitFile, type SubmitRequest } from "./Submit.ts"
export * from "../contract/api/Errors.ts"
export { JobList, JobView, SubmitAnswer } from "../contract/domain/Job.ts"
export { Segment, Transcript, TranscriptFormat, Word } from "../contract/domain/Transcript.ts"
