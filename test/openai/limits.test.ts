/**
 * The request rate on the Bearer routes is the account's REST budget: past it, the OpenAI
 * route answers 429 in OpenAI's shape with `Retry-After`, and `/mcp` answers 429 RATE_LIMITED.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn } from "../support/standInPipeline.ts"

let server: TestServer
let key: string

beforeAll(async () => {
  server = await startServer("openai-limits", { rateLimitPerMinute: 2 }, { pipeline: makeStandIn().layer })
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
})

it("answers 429 past the account's rate, in each route's own shape", async () => {
  const transcribe = () => {
    const form = new FormData()
    form.append("model", "whisper-1")
    return fetch(`${server.url}/v1/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form })
  }
  expect((await transcribe()).status).toBe(400)
  expect((await transcribe()).status).toBe(400)
  const limited = await transcribe()
  expect(limited.status).toBe(429)
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
  expect(await limited.json()).toMatchObject({ error: { type: "requests", code: "rate_limit_exceeded", param: null } })

  const mcp = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
  })
  expect(mcp.status).toBe(429)
  expect(await mcp.json()).toMatchObject({ code: "RATE_LIMITED" })
  expect(mcp.headers.get("retry-after")).not.toBeNull()
})
