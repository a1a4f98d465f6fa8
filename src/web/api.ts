/**
 * The website's way to the API: the typed client derived from the contract
 * (src/client/Client.ts over effect's FetchHttpClient), authenticated as the signed-in person
 * (`Authorization: Bearer <session access token>` for /v1, `X-CSRF-Token` for /web state
 * changes; the session cookie rides along on same-origin requests by itself).
 *
 * Components call `call((api) => api.group.endpoint(...))` and get a promise; a refusal rejects
 * with an `ApiError` whose `message` is the API's own `error` sentence.
 */
import { Cause, Effect, Option } from "effect"
import { FetchHttpClient } from "effect/http"
import { makeClient, type VerbatimApi } from "../client/Client.ts"

export type { VerbatimApi }

/** A refusal or failure, shown to people as `message` (the API's `error` sentence when it sent one). */
export class ApiError extends Error {
  readonly code: string | undefined
  /** The refusal's documented extra fields (`checkout_url`, `upgrade_url`, `retry_after`, …). */
  readonly body: Readonly<Record<string, unknown>>
  constructor(message: string, code: string | undefined, body: Readonly<Record<string, unknown>> = {}) {
    super(message)
    this.code = code
    this.body = body
  }
  link(): string | undefined {
    const url = this.body["checkout_url"] ?? this.body["upgrade_url"] ?? this.body["unlock_url"]
    return typeof url === "string" ? url : undefined
  }
}

const unreachable = "The service could not be reached. Check the connection and try again."

/** Typed errors of the contract carry `error` and `code`; anything else is a transport failure. */
export const toApiError = (failure: unknown): ApiError => {
  if (failure instanceof ApiError) return failure
  if (typeof failure === "object" && failure !== null) {
    const record = failure as Record<string, unknown>
    if (typeof record["error"] === "string") {
      return new ApiError(record["error"], typeof record["code"] === "string" ? record["code"] : undefined, record)
    }
  }
  return new ApiError(unreachable, undefined)
}

export interface Credentials {
  readonly bearer?: string | undefined
  readonly csrfToken?: string | undefined
}

let credentials: Credentials = {}
let client: Promise<VerbatimApi> | undefined

/** Called when the session changes (sign in, sign out, page load). */
export const setCredentials = (next: Credentials) => {
  credentials = next
  client = undefined
}

/** The headers a hand-made request (XMLHttpRequest uploads) needs to act as the signed-in person. */
export const authHeaders = (): Record<string, string> => {
  const headers: Record<string, string> = {}
  if (credentials.bearer !== undefined) headers["authorization"] = `Bearer ${credentials.bearer}`
  if (credentials.csrfToken !== undefined) headers["x-csrf-token"] = credentials.csrfToken
  return headers
}

const build = (): Promise<VerbatimApi> =>
  Effect.runPromise(
    makeClient({ baseUrl: location.origin, bearer: credentials.bearer, csrfToken: credentials.csrfToken }).pipe(
      Effect.map((made) => made.api),
      Effect.provide(FetchHttpClient.layer)
    )
  )

let sessionEnded: (() => void) | undefined

/** Called when a call finds the session gone (expired, or signed out elsewhere): the shell asks again. */
export const onSessionEnded = (listener: () => void) => {
  sessionEnded = listener
}

/** Runs one call of the typed client; rejects with an `ApiError`. */
export const call = async <A, E>(use: (api: VerbatimApi) => Effect.Effect<A, E>): Promise<A> => {
  const api = await (client ??= build())
  const exit = await Effect.runPromiseExit(use(api))
  if (exit._tag === "Success") return exit.value
  const failure = toApiError(Option.getOrUndefined(Cause.findErrorOption(exit.cause)))
  // The website always calls as a session, so these codes mean that session has ended.
  if ((failure.code === "INVALID_SESSION" || failure.code === "SIGN_IN_REQUIRED") && credentials.bearer !== undefined) {
    sessionEnded?.()
  }
  throw failure
}

/** The message to show for anything a call threw. */
export const messageOf = (error: unknown): string => toApiError(error).message
