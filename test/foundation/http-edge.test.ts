/**
 * The request edge over real sockets: error bodies, unknown routes, browser refusal,
 * request ids, OpenAPI and docs, authentication errors, `/v1/me` for guests and key
 * owners, cross-account isolation, and logs that never carry a secret.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "../support/server.ts"

let server: TestServer

beforeAll(async () => {
  server = await startServer("edge", { rateLimitPerMinute: 60 })
})
afterAll(async () => {
  await server?.close()
})

const expectErrorBody = async (response: Response, status: number, code: string) => {
  expect(response.status).toBe(status)
  expect(response.headers.get("content-type")).toMatch(/application\/json/)
  const body = await response.json() as Record<string, unknown>
  expect(body["code"]).toBe(code)
  expect(typeof body["error"]).toBe("string")
  expect((body["error"] as string).length).toBeGreaterThan(10)
  return body
}

describe("request edge", () => {
  it("answers unknown routes with 404 NOT_FOUND as JSON", async () => {
    await expectErrorBody(await server.get("/v1/does-not-exist"), 404, "NOT_FOUND")
    await expectErrorBody(await fetch(`${server.url}/`, { method: "DELETE" }), 404, "NOT_FOUND")
  })

  it("refuses requests carrying Origin with 403 BROWSER_FORBIDDEN and no CORS headers", async () => {
    const response = await server.get("/v1/me", { Origin: "https://example.com" })
    await expectErrorBody(response, 403, "BROWSER_FORBIDDEN")
    expect(response.headers.get("access-control-allow-origin")).toBeNull()
  })

  it("refuses CORS preflights with 403", async () => {
    const response = await fetch(`${server.url}/v1/me`, {
      method: "OPTIONS",
      headers: { "Access-Control-Request-Method": "GET" }
    })
    await expectErrorBody(response, 403, "BROWSER_FORBIDDEN")
    expect(response.headers.get("access-control-allow-methods")).toBeNull()
  })

  it("puts a request id on every response and echoes a sane client id", async () => {
    const generated = await server.get("/v1/me")
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const echoed = await server.get("/v1/nope", { "X-Request-Id": "client-req-42" })
    expect(echoed.headers.get("x-request-id")).toBe("client-req-42")
    const replaced = await server.get("/v1/me", { "X-Request-Id": "bad id with spaces" })
    expect(replaced.headers.get("x-request-id")).not.toBe("bad id with spaces")
  })

  it("answers malformed JSON with 400 MALFORMED_JSON and invalid fields with 422 and a detail list", async () => {
    const owner = await server.account()
    const post = (body: string, contentType = "application/json") =>
      fetch(`${server.url}/v1/checkout`, {
        method: "POST",
        headers: { "X-API-Key": owner.key, "Content-Type": contentType },
        body
      })
    await expectErrorBody(await post("{\"sku\": "), 400, "MALFORMED_JSON")
    const invalid = await expectErrorBody(await post(JSON.stringify({ sku: 42 })), 422, "VALIDATION_FAILED")
    expect(invalid["detail"]).toEqual([expect.objectContaining({ loc: ["body", "sku"], msg: expect.any(String) })])
    const missing = await expectErrorBody(await post("{}"), 422, "VALIDATION_FAILED")
    expect(missing["detail"]).toEqual([expect.objectContaining({ loc: ["body", "sku"] })])
    await expectErrorBody(await post("sku=mini-4", "text/plain"), 415, "UNSUPPORTED_CONTENT_TYPE")
  })

  it("answers 422 BAD_SOURCE for an unknown source and 400 BAD_ID for a malformed job id", async () => {
    const owner = await server.account()
    const response = await fetch(`${server.url}/v1/transcribe/url`, {
      method: "POST",
      headers: { "X-API-Key": owner.key, "Content-Type": "application/json" },
      body: JSON.stringify({ url: "https://example.com/a.mp3", source: "fax" })
    })
    const body = await expectErrorBody(response, 422, "BAD_SOURCE")
    expect(body["detail"]).toEqual([expect.objectContaining({ loc: ["body", "source"] })])
    await expectErrorBody(await server.get("/v1/jobs/not-a-uuid", { "X-API-Key": owner.key }), 400, "BAD_ID")
    await expectErrorBody(await server.get("/v1/jobs", {}), 401, "MISSING_API_KEY")
  })

  it("serves an OpenAPI 3.1 document and a docs page", async () => {
    const spec = await (await server.get("/openapi.json")).json() as {
      openapi: string
      paths: Record<string, unknown>
      components: { securitySchemes: Record<string, { type: string; name: string; in: string }> }
    }
    expect(spec.openapi).toBe("3.1.0")
    expect(Object.keys(spec.paths)).toContain("/v1/me")
    expect(Object.values(spec.components.securitySchemes)).toContainEqual(
      expect.objectContaining({ type: "apiKey", name: "X-API-Key", in: "header" })
    )
    const docs = await server.get("/docs")
    expect(docs.status).toBe(200)
    expect(await docs.text()).toMatch(/<html/i)
  })
})

describe("authentication and /v1/me", () => {
  it("answers a keyless caller as a guest", async () => {
    const response = await server.get("/v1/me")
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      email: null,
      tier: "guest",
      retention_days: 36500,
      signed_in: false,
      account_id: null,
      plan: null
    })
  })

  it("identifies a key's account with its plan", async () => {
    const owner = await server.account()
    const response = await server.get("/v1/me", { "X-API-Key": owner.key })
    expect(response.status).toBe(200)
    const me = await response.json() as Record<string, unknown>
    expect(me).toMatchObject({
      email: owner.email,
      tier: "free",
      retention_days: 36500,
      signed_in: false,
      account_id: owner.accountId,
      plan: { id: "standard", requests_per_minute: 60, completion: "poll" }
    })
  })

  it("keeps accounts apart: each key sees only its own account", async () => {
    const a = await server.account()
    const b = await server.account()
    const meA = await (await server.get("/v1/me", { "X-API-Key": a.key })).json() as { email: string }
    const meB = await (await server.get("/v1/me", { "X-API-Key": b.key })).json() as { email: string }
    expect(meA.email).toBe(a.email)
    expect(meB.email).toBe(b.email)
    expect(meA.email).not.toBe(meB.email)
  })

  it("rejects an unknown key with 401 INVALID_API_KEY", async () => {
    await expectErrorBody(await server.get("/v1/me", { "X-API-Key": "vb_not-a-real-key" }), 401, "INVALID_API_KEY")
  })

  it("rejects a Bearer token with 401 saying the key goes in X-API-Key", async () => {
    const owner = await server.account()
    const body = await expectErrorBody(
      await server.get("/v1/me", { Authorization: `Bearer ${owner.key}` }),
      401,
      "MISSING_API_KEY"
    )
    expect(body["error"]).toMatch(/X-API-Key/)
  })

  it("never writes a key or claim token into the logs", async () => {
    const owner = await server.account()
    await server.get("/v1/me", { "X-API-Key": owner.key })
    await server.get("/v1/me", { "X-Claim-Token": "claim_secret_value" })
    await server.get("/v1/me", { Authorization: `Bearer ${owner.key}` })
    const requestLines = server.logs.filter((line) => line.includes("\"msg\":\"request\""))
    expect(requestLines.length).toBeGreaterThan(3)
    const line = requestLines.find((l) => l.includes(owner.accountId))
    expect(line).toBeDefined()
    expect(JSON.parse(line!)).toMatchObject({ method: "GET", path: "/v1/me", status: 200 })
    for (const logged of server.logs) {
      expect(logged).not.toContain(owner.key)
      expect(logged).not.toContain("claim_secret_value")
    }
  })
})
