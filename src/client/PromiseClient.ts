/**
 * The same client for code that does not use Effect: every call returns a Promise and
 * rejects with the contract's error (e.g. `NotFound`, with `code` and `error`) on an error
 * answer. Requests go through the runtime's `fetch`.
 */
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import type { SubmitOptions } from "../contract/api/JobsApi.ts"
import type { TranscriptFormat } from "../contract/domain/Transcript.ts"
import { type ClientOptions, makeClient, type VerbatimClient } from "./Client.ts"
import { uploadDirect } from "./DirectUpload.ts"
import type { MediaInput } from "./Media.ts"
import { playbackUrl } from "./Playback.ts"
import { waitForJob, type WaitOptions } from "./Polling.ts"
import { submitFile, type SubmitRequest } from "./Submit.ts"

const run = <A, E>(effect: Effect.Effect<A, E, never>): Promise<A> => Effect.runPromise(effect)

export const createClient = (options: ClientOptions) => {
  const client: Promise<VerbatimClient> = run(makeClient(options).pipe(Effect.provide(FetchHttpClient.layer)))
  const use = <A, E>(f: (client: VerbatimClient) => Effect.Effect<A, E, never>) =>
    client.then((ready) => run(f(ready)))
  return {
    /** The Effect client, for everything the helpers below do not cover. */
    effect: client,
    submitFile: (input: MediaInput, request?: SubmitRequest) => use((c) => submitFile(c, input, request)),
    submitUrl: (url: string, request: SubmitRequest = {}) =>
      use((c) =>
        c.api.submit.url({
          payload: { url, ...request.options },
          headers: request.idempotencyKey === undefined ? {} : { "idempotency-key": request.idempotencyKey }
        })
      ),
    uploadDirect: (input: MediaInput, request?: SubmitRequest) => use((c) => uploadDirect(c, input, request)),
    getJob: (jobId: string, claimToken?: string) =>
      use((c) =>
        c.api.jobs.get({
          params: { job_id: jobId },
          headers: claimToken === undefined ? {} : { "x-claim-token": claimToken }
        })
      ),
    waitForJob: (jobId: string, wait?: WaitOptions) => use((c) => waitForJob(c, jobId, wait)),
    /**
     * The deleted jobs that can still be restored (`GET /v1/jobs?status=deleted`), most recently
     * deleted first, with `deleted_at` and `restorable_until`; bring one back with `restore`.
     */
    deletedJobs: (page: { readonly limit?: number; readonly offset?: number } = {}) =>
      use((c) => c.api.jobList.list({ query: { status: "deleted", ...page } })),
    restore: (jobId: string, claimToken?: string) =>
      use((c) =>
        c.api.jobs.restore({
          params: { job_id: jobId },
          headers: claimToken === undefined ? {} : { "x-claim-token": claimToken }
        })
      ),
    /** A playback link of the job's original audio, ready to fetch (a signed path is put on `baseUrl`). */
    audioUrl: (jobId: string, claimToken?: string) => use((c) => playbackUrl(c, jobId, claimToken)),
    /** The transcript as JSON; other formats come back as text (docx as bytes). */
    result: (jobId: string, format: TranscriptFormat = "json", claimToken?: string) =>
      use((c) =>
        c.api.jobs.result({
          params: { job_id: jobId },
          query: { format },
          headers: claimToken === undefined ? {} : { "x-claim-token": claimToken }
        })
      )
  }
}

export type PromiseClient = ReturnType<typeof createClient>
export type { SubmitOptions }
