/** Reading, listing, deleting and restoring jobs: decode → one service call → encode. */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { JobAccess } from "../../services/access/JobAccess.ts"
import { JobCommands } from "../../services/access/JobCommands.ts"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { Paywall } from "../../services/billing/Paywall.ts"
import { JobQueries } from "../../services/access/JobQueries.ts"
import { etagOf, makeJobView } from "../../services/jobs/JobViews.ts"
import { TranscriptAccess } from "../../services/transcripts/TranscriptAccess.ts"
import { Api } from "../contract/api/Api.ts"
import { CurrentAccount, CurrentCaller } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { publicBaseUrl } from "./PublicUrl.ts"

export const JobListHandlers = HttpApiBuilder.group(
  Api,
  "jobList",
  Effect.fn(function*(handlers) {
    const config = yield* ServerConfig
    const paywall = yield* Paywall
    const queries = yield* JobQueries
    return handlers
      .handle("list", ({ query, request }) =>
        Effect.gen(function*() {
          const { account } = yield* CurrentAccount
          return yield* queries.list(account.id, query, paywall.pricingUrl(publicBaseUrl(config, request)))
        }))
      .handle("batchStatus", ({ payload }) =>
        Effect.gen(function*() {
          const { account } = yield* CurrentAccount
          return yield* queries.batchStatus(account.id, payload.ids)
        }))
  })
)

export const JobHandlers = HttpApiBuilder.group(
  Api,
  "jobs",
  Effect.fn(function*(handlers) {
    const config = yield* ServerConfig
    const paywall = yield* Paywall
    const jobView = yield* makeJobView
    const access = yield* JobAccess
    const commands = yield* JobCommands
    const transcripts = yield* TranscriptAccess

    return handlers
      .handle("get", ({ params, headers, request }) =>
        Effect.gen(function*() {
          const job = yield* access.load(yield* CurrentCaller, JobId.make(params.job_id))
          const view = yield* jobView(job, paywall.pricingUrl(publicBaseUrl(config, request)))
          const etag = etagOf(view)
          const sent = headers["if-none-match"]
          if (sent !== undefined && sent.split(",").some((tag) => tag.trim() === etag)) {
            return HttpServerResponse.empty({ status: 304, headers: { etag } })
          }
          return HttpServerResponse.jsonUnsafe(view, { headers: { etag, "cache-control": "no-cache" } })
        }))
      .handle("remove", ({ params }) =>
        Effect.gen(function*() {
          yield* commands.remove(yield* CurrentCaller, JobId.make(params.job_id))
        }))
      .handle("result", ({ params, query, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const job = yield* access.load(caller, JobId.make(params.job_id))
          const format = query.format ?? "json"
          const read = yield* transcripts.read(caller, job, format, publicBaseUrl(config, request), {
            maxCharsPerLine: query.max_chars_per_line,
            maxLinesPerCue: query.max_lines_per_cue,
            maxCueSeconds: query.max_cue_seconds
          })
          if (read._tag === "Preview") {
            return HttpServerResponse.jsonUnsafe({ ...read.transcript, locked: true, preview: true })
          }
          return HttpServerResponse.uint8Array(read.rendered.body, {
            contentType: read.rendered.contentType,
            headers: format === "json"
              ? {}
              : { "content-disposition": `attachment; filename="${read.basename}.${read.rendered.extension}"` }
          })
        }))
      .handle("correct", ({ params, payload }) =>
        Effect.gen(function*() {
          const job = yield* access.load(yield* CurrentCaller, JobId.make(params.job_id))
          return yield* transcripts.correct(job, payload.segments)
        }))
      .handle("restore", ({ params }) =>
        Effect.gen(function*() {
          return yield* commands.restore(yield* CurrentCaller, JobId.make(params.job_id))
        }))
  })
)
