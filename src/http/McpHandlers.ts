/**
 * `/mcp`: the Streamable HTTP MCP endpoint (Effect's `McpServer`), on the same HTTP server
 * as the REST API. The key comes as `Authorization: Bearer <key>`; a request without a
 * usable one is refused at the HTTP level (401 with `WWW-Authenticate`) before any JSON-RPC
 * is read, and counts against the account's request rate like a REST call. Each tool calls
 * the services the REST handlers call (no HTTP loop-back), as the key's account.
 */
import { Effect, Layer, Option } from "effect"
import { McpProtocol, McpServer } from "effect/ai"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { JobAccess } from "../../services/access/JobAccess.ts"
import { JobQueries } from "../../services/access/JobQueries.ts"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { Paywall } from "../../services/billing/Paywall.ts"
import { SubmitJob } from "../../services/intake/SubmitJob.ts"
import { makeJobView } from "../../services/jobs/JobViews.ts"
import { TranscriptAccess } from "../../services/transcripts/TranscriptAccess.ts"
import { Clips } from "../../services/clips/Clips.ts"
import { JobInsights } from "../../services/insights/JobInsights.ts"
import { ClipDiscovery } from "../../services/search-index/ClipDiscovery.ts"
import { LibrarySearch } from "../../services/search-index/LibrarySearch.ts"
import { InvalidApiKey, MissingApiKey, RateLimited } from "../contract/api/Errors.ts"
import { CurrentAccount } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { type ToolFailure, VerbatimTools } from "../contract/mcp/McpTools.ts"
import { makeBearerAuth } from "./BearerAuth.ts"
import { makeUsageView } from "./UsageView.ts"
import { errorResponse } from "./ErrorResponses.ts"

export const mcpPath = "/mcp"

/** Links handed out in tool answers (pay links, unlock links) use the configured public root. */
const baseUrl = (config: ServerConfig["Service"]) => Option.getOrElse(config.publicUrl, () => `http://${config.host}:${config.port}`)

const extras = ["retry_after", "checkout_url", "upgrade_url", "limit", "running"] as const

/** A contract error as its REST body: the sentence, the code and the documented extra fields. */
export const toToolFailure = (error: { readonly error: string; readonly code: string }): ToolFailure => {
  const failure: Record<string, unknown> = { error: error.error, code: error.code }
  for (const name of extras) {
    const value = (error as unknown as Record<string, unknown>)[name]
    if (value !== undefined) failure[name] = value
  }
  return failure as ToolFailure
}

const ToolHandlers = VerbatimTools.toLayer(Effect.gen(function*() {
  const config = yield* ServerConfig
  const submitJob = yield* SubmitJob
  const access = yield* JobAccess
  const queries = yield* JobQueries
  const transcripts = yield* TranscriptAccess
  const paywall = yield* Paywall
  const usageView = yield* makeUsageView
  const jobView = yield* makeJobView
  const jobInsights = yield* JobInsights
  const library = yield* LibrarySearch
  const discovery = yield* ClipDiscovery
  const clips = yield* Clips
  const base = baseUrl(config)
  const refuse = Effect.mapError(toToolFailure)

  return VerbatimTools.of({
    submit_link: ({ url, ...options }) =>
      Effect.gen(function*() {
        const admitted = yield* submitJob.submit({
          caller: yield* CurrentAccount,
          source: submitJob.link(url),
          options,
          idempotencyKey: undefined,
          base
        })
        return admitted.answer
      }).pipe(refuse),
    job_status: ({ job_id }) =>
      Effect.gen(function*() {
        const job = yield* access.load(yield* CurrentAccount, JobId.make(job_id))
        return yield* jobView(job, paywall.pricingUrl(base))
      }).pipe(refuse),
    list_jobs: (query) =>
      Effect.gen(function*() {
        const { account } = yield* CurrentAccount
        return yield* queries.list(account.id, query, paywall.pricingUrl(base))
      }),
    transcript: ({ format = "json", job_id }) =>
      Effect.gen(function*() {
        const caller = yield* CurrentAccount
        const job = yield* access.load(caller, JobId.make(job_id))
        const read = yield* transcripts.read(caller, job, format, base)
        return read._tag === "Preview"
          ? { job_id, format, preview: true, text: JSON.stringify({ ...read.transcript, locked: true, preview: true }) }
          : { job_id, format, preview: false, text: new TextDecoder().decode(read.rendered.body) }
      }).pipe(refuse),
    balance: () => Effect.flatMap(CurrentAccount, ({ account }) => usageView(account.id)),
    insights: ({ job_id }) =>
      Effect.gen(function*() {
        return { insights: yield* jobInsights.get(yield* CurrentAccount, JobId.make(job_id), base) }
      }).pipe(refuse),
    library_search: (request) =>
      Effect.gen(function*() {
        const { account } = yield* CurrentAccount
        return yield* library.search(account.id, request)
      }).pipe(refuse),
    clip_candidates: ({ job_id, kind }) =>
      Effect.gen(function*() {
        return yield* discovery.candidates(yield* CurrentAccount, JobId.make(job_id), kind ?? "all", base)
      }).pipe(refuse),
    clip_search: ({ job_id, q }) =>
      Effect.gen(function*() {
        return yield* discovery.search(yield* CurrentAccount, JobId.make(job_id), q, base)
      }).pipe(refuse),
    create_clip: ({ job_id, ...request }) =>
      Effect.gen(function*() {
        return yield* clips.create(yield* CurrentAccount, JobId.make(job_id), request, base)
      }).pipe(refuse),
    clip_status: ({ clip_id }) =>
      Effect.gen(function*() {
        const { account } = yield* CurrentAccount
        return yield* clips.get(account.id, clip_id, base)
      }).pipe(refuse)
  })
}))

const challenge = (error: string) => `Bearer realm="verbatim", error="invalid_token", error_description="${error}"`

/** Bearer auth around `/mcp`: refusals are HTTP answers, so clients see 401 and start their auth flow. */
const McpAuth = HttpRouter.middleware<{ provides: CurrentAccount }>()(
  Effect.gen(function*() {
    const authenticate = yield* makeBearerAuth
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        return yield* authenticate(request).pipe(
          Effect.matchEffect({
            onSuccess: (caller) => Effect.provideService(httpEffect, CurrentAccount, caller),
            onFailure: (refused) =>
              Effect.succeed(
                refused._tag === "RateLimited"
                  ? errorResponse(RateLimited, refused)
                  : HttpServerResponse.setHeader(
                    refused._tag === "MissingApiKey"
                      ? errorResponse(MissingApiKey, refused)
                      : errorResponse(InvalidApiKey, refused),
                    "www-authenticate",
                    refused._tag === "MissingApiKey" ? `Bearer realm="verbatim"` : challenge(refused.error)
                  )
              )
          })
        )
      })
  })
)

/** Every protocol revision from 2025-03-26 through the newest the MCP server implements. */
export const mcpProtocols = [
  McpProtocol.v2025_03_26,
  McpProtocol.v2025_06_18,
  McpProtocol.v2025_11_25,
  McpProtocol.v2026_07_28
] as const

export const McpRoutes = McpServer.layerHttp({
  name: "verbatim",
  version: "1.0.0",
  instructions: "Transcribe recordings from public links and work with the transcripts. Submit with submit_link, " +
    "poll job_status until done, then call transcript, insights, clip_candidates or clip_search; library_search " +
    "searches every finished transcript; create_clip renders a captioned clip (poll clip_status).",
  path: mcpPath,
  protocols: mcpProtocols,
  allowSessionTermination: true,
  registrations: McpServer.toolkit(VerbatimTools).pipe(Layer.provide(ToolHandlers))
}).pipe(Layer.provide(McpAuth.layer))
