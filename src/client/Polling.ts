/**
 * Following a job until it settles, at the rate the API allows: one `GET /v1/jobs/{id}`
 * every 3 seconds or slower, with `If-None-Match` so an unchanged job costs a bodyless
 * 304, and a 429 answered by waiting the `Retry-After` it carries.
 */
import { Duration, Effect, Schema } from "effect"
import type { JobView } from "../contract/domain/Job.ts"
import type { VerbatimClient } from "./Client.ts"

/** The spec's floor for polling one job. */
export const minimumPollSeconds = 3

export interface WaitOptions {
  /** Seconds between polls; values under 3 are raised to 3. */
  readonly intervalSeconds?: number | undefined
  /** Give up after this many seconds (default: wait as long as it takes). */
  readonly timeoutSeconds?: number | undefined
  /** For a keyless sample job: the submit answer's `claim_token`. */
  readonly claimToken?: string | undefined
  /** When to stop; default: `done` or `failed`. */
  readonly until?: ((job: JobView) => boolean) | undefined
}

export class JobWaitTimedOut extends Schema.TaggedError<JobWaitTimedOut>()("JobWaitTimedOut", {
  job_id: Schema.String,
  seconds: Schema.Number,
  last_status: Schema.NullOr(Schema.String)
}) {}

const settled = (job: JobView) => job.status === "done" || job.status === "failed"

export const waitForJob = Effect.fn("VerbatimClient.waitForJob")(function*(
  client: VerbatimClient,
  jobId: string,
  options: WaitOptions = {}
) {
  const interval = Duration.seconds(Math.max(minimumPollSeconds, options.intervalSeconds ?? minimumPollSeconds))
  const until = options.until ?? settled
  let etag: string | undefined
  let last: JobView | undefined
  const poll = Effect.gen(function*() {
    while (true) {
      const answer = yield* client.api.jobs.get({
        params: { job_id: jobId },
        headers: {
          ...(options.claimToken === undefined ? {} : { "x-claim-token": options.claimToken }),
          ...(etag === undefined ? {} : { "if-none-match": etag })
        },
        responseMode: "decoded-and-response"
      }).pipe(
        Effect.map((pair) => ({ _tag: "Answer" as const, pair })),
        Effect.catchTag("RateLimited", (limited) => Effect.succeed({ _tag: "Limited" as const, seconds: limited.retry_after }))
      )
      if (answer._tag === "Limited") {
        yield* Effect.sleep(Duration.seconds(Math.max(minimumPollSeconds, answer.seconds)))
        continue
      }
      const [job, response] = answer.pair
      // A 304 decodes to nothing: the job is as last seen.
      if (job !== undefined) {
        last = job
        etag = response.headers["etag"] ?? etag
      }
      if (last !== undefined && until(last)) return last
      yield* Effect.sleep(interval)
    }
  })
  if (options.timeoutSeconds === undefined) return yield* poll
  return yield* poll.pipe(
    Effect.timeoutOrElse({
      duration: Duration.seconds(options.timeoutSeconds),
      orElse: () =>
        Effect.fail(
          new JobWaitTimedOut({ job_id: jobId, seconds: options.timeoutSeconds!, last_status: last?.status ?? null })
        )
    })
  )
})
