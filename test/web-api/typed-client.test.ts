/**
 * The typed client as the web app uses it (issue 23): the website's endpoints are methods of
 * `client.api` (from the contract), `bearer` sends the session's access token as
 * `Authorization: Bearer` on /v1, and `csrfToken` sends `X-CSRF-Token` on /web changes. The
 * browser keeps the cookie itself; here a client that adds the `Cookie` header stands in for it.
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { afterAll, beforeAll, expect, it } from "vitest"
import { makeClient, type VerbatimClient } from "verbatim/client"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn } from "../support/standInPipeline.ts"
import { password } from "./support.ts"

let server: TestServer
beforeAll(async () => {
  server = await startServer("web-typed-client", {}, { pipeline: makeStandIn({ delayMs: 50, steps: 1 }).layer })
})
afterAll(async () => server?.close())

/** Fetch, plus the cookie a browser would send back. */
const withCookie = (cookie: string | undefined) =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      return cookie === undefined ? client : client.pipe(HttpClient.mapRequest(HttpClientRequest.setHeader("cookie", cookie)))
    })
  ).pipe(Layer.provide(FetchHttpClient.layer))

const run = <A, E>(
  options: { readonly bearer?: string; readonly csrfToken?: string; readonly cookie?: string },
  f: (client: VerbatimClient) => Effect.Effect<A, E>
) =>
  Effect.runPromise(
    makeClient({ baseUrl: server.url, bearer: options.bearer, csrfToken: options.csrfToken }).pipe(
      Effect.flatMap(f),
      Effect.provide(withCookie(options.cookie))
    )
  )

it("signs up, reads the session, calls /v1 as the user and changes /web with the CSRF token", async () => {
  const signedUp = await run({}, (client) => client.api.webAuth.signUp({ payload: { email: "owner@example.com", password } }))
  expect(signedUp.signed_in).toBe(true)
  expect(signedUp.account?.role).toBe("owner")

  // The cookie the browser would keep: sign in with fetch to read Set-Cookie.
  const response = await fetch(`${server.url}/web/signin`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email: "owner@example.com", password })
  })
  const cookie = response.headers.getSetCookie()[0]!.split(";")[0]!
  const session = await run({ cookie }, (client) => client.api.webAuth.session())
  expect(session.signed_in).toBe(true)

  const me = await run({ bearer: session.access_token! }, (client) => client.api.account.me())
  expect(me).toMatchObject({ email: "owner@example.com", signed_in: true })

  const key = await run({ cookie, csrfToken: session.csrf_token! }, (client) =>
    client.api.webAccount.createKey({ payload: { name: "from the typed client" } }))
  expect(key.key).toMatch(/^vb_/)

  const refused = await run({ cookie }, (client) =>
    Effect.flip(client.api.webAccount.createKey({ payload: {} })))
  expect(refused).toMatchObject({ _tag: "CsrfFailed", code: "CSRF_FAILED" })
})
