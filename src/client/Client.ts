/**
 * The typed client of the Verbatim API, derived from the same HttpApi definition as the
 * server routes and `/openapi.json` (`src/contract`). Every endpoint is a method of
 * `client.api` (`client.api.jobs.get({ params: { job_id } })`), with payloads, successes
 * and the declared errors (`NotFound`, `RateLimited`, …) typed from the contract.
 */
import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api } from "../contract/api/Api.ts"

export interface ClientOptions {
  /** Where the service listens, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string
  /** An account key, sent as `X-API-Key`; without one the client is a keyless guest. */
  readonly apiKey?: string | undefined
  /**
   * A signed-in user's session access token (`vbs_…`, from `GET /web/session`), sent as
   * `Authorization: Bearer`: what the website's own pages use on `/v1/*` instead of a key.
   */
  readonly bearer?: string | undefined
  /** The session's CSRF token (from `GET /web/session`), sent as `X-CSRF-Token` for `/web/*` changes. */
  readonly csrfToken?: string | undefined
}

export type VerbatimApi = HttpApiClient.ForApi<typeof Api>

export interface VerbatimClient {
  readonly api: VerbatimApi
  /** A plain HTTP client without the key, for the signed upload URL of a direct upload. */
  readonly http: HttpClient.HttpClient
  readonly baseUrl: string
}

export const makeClient = (options: ClientOptions): Effect.Effect<VerbatimClient, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const headers: Record<string, string> = {}
    if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey
    if (options.bearer !== undefined) headers["authorization"] = `Bearer ${options.bearer}`
    if (options.csrfToken !== undefined) headers["x-csrf-token"] = options.csrfToken
    const api = yield* HttpApiClient.make(Api, {
      baseUrl: options.baseUrl,
      transformClient: Object.keys(headers).length === 0
        ? undefined
        : HttpClient.mapRequest(HttpClientRequest.setHeaders(headers))
    })
    return { api, http, baseUrl: options.baseUrl }
  })
