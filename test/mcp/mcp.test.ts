/**
 * `/mcp` over a real socket with the official MCP TypeScript SDK client: initialize (the
 * SDK's newest revision and 2025-03-26), tools/list, tools/call for every tool (a link
 * submitted through a local link server, transcribed by the stand-in pipeline and read in
 * every text format; the balance; insights, library search, clip candidates and search,
 * clip creation and status refusals), tool errors carrying the REST code and sentence,
 * isolation between two accounts, and the HTTP-level refusals (no key, a bad key, a key in
 * X-API-Key) with `WWW-Authenticate`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { respond, startTestServer, type TestServer as LinkServer } from "../support/linkTestServer.ts"
import { eventually } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

const scope = Effect.runSync(Scope.make())
const standIn = makeStandIn({ delayMs: 100, steps: 1 })
let server: TestServer
let links: LinkServer
let alice: string
let bob: string
const clients: Array<Client> = []
const meeting = "Welcome to the operations review. The warehouse inventory count finished on Friday and the numbers " +
  "look better than last quarter. Shipping delays dropped by a third after we moved the loading schedule. " +
  "Next we need to hire two more people for the night shift and replace the old scanners. " +
  "Maria will prepare the budget for the scanners by next Wednesday. Any questions before we close?"

const connect = async (key: string, protocolVersion?: string) => {
  const client = new Client({ name: "verbatim-test", version: "1.0.0" })
  const headers: Record<string, string> = { authorization: `Bearer ${key}` }
  if (protocolVersion !== undefined) headers["mcp-protocol-version"] = protocolVersion
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers } }))
  clients.push(client)
  return client
}

interface CallResult {
  readonly isError?: boolean
  readonly structuredContent?: Record<string, unknown>
  readonly content: Array<{ readonly type: string; readonly text?: string }>
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as unknown as CallResult

const failureOf = (result: CallResult) => {
  expect(result.isError).toBe(true)
  return JSON.parse(result.content[0]!.text!) as { error: string; code: string }
}

beforeAll(async () => {
  links = await Effect.runPromise(Scope.provide(scope)(startTestServer({
    "/media/talk.wav": respond(200, { "content-type": "audio/wav" }, tinyWav({ text: "Hello from a link." })),
    "/media/silence.wav": respond(200, { "content-type": "audio/wav" }, tinyWav({ silent: true })),
    "/media/meeting.wav": respond(200, { "content-type": "audio/wav" }, tinyWav({ text: meeting }, 4))
  })))
  server = await startServer("mcp", { fetchAllow: [`127.0.0.1:${links.port}`] }, { pipeline: standIn.layer })
  alice = (await server.account()).key
  bob = (await server.account()).key
})

afterAll(async () => {
  for (const client of clients) await client.close()
  await server?.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

describe("MCP endpoint", () => {
  it("initializes and lists the tools with their contract schemas", async () => {
    const client = await connect(alice)
    expect(client.getServerVersion()?.name).toBe("verbatim")
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "balance",
      "clip_candidates",
      "clip_search",
      "clip_status",
      "create_clip",
      "insights",
      "job_status",
      "library_search",
      "list_jobs",
      "submit_link",
      "transcript"
    ])
    const submit = tools.find((tool) => tool.name === "submit_link")!
    expect(submit.inputSchema.required).toEqual(["url"])
    expect(Object.keys(submit.inputSchema.properties ?? {})).toEqual([
      "url",
      "language",
      "diarize",
      "min_speakers",
      "max_speakers",
      "speakers_expected",
      "word_timestamps",
      "prompt",
      "task"
    ])
  })

  it("speaks protocol 2025-03-26 as well", async () => {
    const response = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "old", version: "0" } }
      })
    })
    expect(response.status).toBe(200)
    const text = await response.text()
    expect(text).toContain("\"protocolVersion\":\"2025-03-26\"")
  })

  it("submits a link, follows the job and reads the transcript in every text format", async () => {
    const client = await connect(alice)
    const submitted = await call(client, "submit_link", { url: `${links.origin}/media/talk.wav` })
    expect(submitted.isError).toBeFalsy()
    const jobId = submitted.structuredContent!["job_id"] as string
    expect(submitted.structuredContent!["status"]).toBe("queued")

    const done = await eventually(async () => {
      const status = await call(client, "job_status", { job_id: jobId })
      return status.structuredContent!["status"] === "done" ? status.structuredContent! : undefined
    }, "the job to finish", 20_000)
    expect(done["source"]).toBe("url")

    const json = await call(client, "transcript", { job_id: jobId })
    expect(json.structuredContent!["preview"]).toBe(false)
    expect(JSON.parse(json.structuredContent!["text"] as string).text).toContain("Hello from a link.")
    for (const format of ["txt", "srt", "vtt"]) {
      const read = await call(client, "transcript", { job_id: jobId, format })
      expect(read.structuredContent!["format"]).toBe(format)
      expect(read.structuredContent!["text"]).toContain("Hello from a link.")
    }
    expect((await call(client, "transcript", { job_id: jobId, format: "srt" })).structuredContent!["text"]).toMatch(/00:00:00,000 -->/)

    const listed = await call(client, "list_jobs", { limit: 5 })
    expect((listed.structuredContent!["jobs"] as Array<{ job_id: string }>).map((job) => job.job_id)).toContain(jobId)

    const balance = await call(client, "balance")
    expect(balance.isError).toBeFalsy()
    expect(typeof balance.structuredContent!["daily_allowance_minutes"]).toBe("number")
    expect(balance.structuredContent!["minutes_today"]).toBeGreaterThan(0)
  })

  it("reaches insights, library search and clips through the same services, as the key's account", async () => {
    const client = await connect(alice)
    const submitted = await call(client, "submit_link", { url: `${links.origin}/media/meeting.wav` })
    const jobId = submitted.structuredContent!["job_id"] as string
    await eventually(async () => {
      const status = await call(client, "job_status", { job_id: jobId })
      return status.structuredContent!["status"] === "done" ? true : undefined
    }, "the job to finish", 20_000)

    const insights = await call(client, "insights", { job_id: jobId })
    expect(insights.isError, insights.content[0]?.text).toBeFalsy()
    expect(insights.structuredContent!["insights"]).toBeTypeOf("object")

    const found = await eventually(async () => {
      const result = await call(client, "library_search", { q: "warehouse inventory" })
      const hits = result.structuredContent!["hits"] as Array<{ job_id: string }>
      return hits.some((hit) => hit.job_id === jobId) ? hits : undefined
    }, "the transcript to be indexed", 30_000)
    expect(found.length).toBeGreaterThan(0)

    const candidates = await call(client, "clip_candidates", { job_id: jobId, kind: "all" })
    expect(Array.isArray(candidates.structuredContent!["candidates"])).toBe(true)
    const moments = await call(client, "clip_search", { job_id: jobId, q: "warehouse" })
    expect(Array.isArray(moments.structuredContent!["moments"])).toBe(true)

    // The stand-in pipeline's recordings last 0.5 s, shorter than any clip: the clip service's own
    // refusal comes back (a rendered clip over MCP would only repeat test/clips on a real recording).
    const clip = failureOf(await call(client, "create_clip", { job_id: jobId, start_s: 0, end_s: 2 }))
    expect(clip).toMatchObject({ code: "VALIDATION_FAILED" })
    expect(clip.error).toContain("inside the recording")
    // Refusals carry the REST codes.
    expect(failureOf(await call(client, "create_clip", { job_id: jobId, start_s: 0, end_s: 0.4 })).code).toBe("VALIDATION_FAILED")
    expect(failureOf(await call(client, "clip_status", { clip_id: crypto.randomUUID() })).code).toBe("NOT_FOUND")
    const silent = await call(client, "submit_link", { url: `${links.origin}/media/silence.wav` })
    const silentId = silent.structuredContent!["job_id"] as string
    await eventually(async () => {
      const s = await call(client, "job_status", { job_id: silentId })
      return s.structuredContent!["status"] === "done" ? true : undefined
    }, "the silent job to finish", 20_000)
    expect(failureOf(await call(client, "insights", { job_id: silentId })).code).toBe("NO_SPEECH")

    // Another account sees none of it.
    const stranger = await connect(bob)
    for (const [name, args] of [
      ["insights", { job_id: jobId }],
      ["clip_candidates", { job_id: jobId }],
      ["clip_search", { job_id: jobId, q: "warehouse" }],
      ["create_clip", { job_id: jobId, start_s: 0, end_s: 2 }]
    ] as const) {
      expect(failureOf(await call(stranger, name, args)).code, name).toBe("NOT_FOUND")
    }
    const theirs = await call(stranger, "library_search", { q: "warehouse inventory" })
    expect(theirs.structuredContent!["hits"]).toEqual([])
  }, 90_000)

  it("keeps accounts apart: another account's job is NOT_FOUND, and its list is its own", async () => {
    const a = await connect(alice)
    const b = await connect(bob)
    const submitted = await call(a, "submit_link", { url: `${links.origin}/media/talk.wav` })
    const jobId = submitted.structuredContent!["job_id"] as string
    const stranger = failureOf(await call(b, "job_status", { job_id: jobId }))
    expect(stranger.code).toBe("NOT_FOUND")
    expect(failureOf(await call(b, "transcript", { job_id: jobId })).code).toBe("NOT_FOUND")
    const listed = await call(b, "list_jobs")
    expect(listed.structuredContent!["jobs"]).toEqual([])
  })

  it("returns the REST code and sentence as the tool error", async () => {
    const client = await connect(alice)
    const refused = failureOf(await call(client, "submit_link", { url: "not a link at all" }))
    expect(refused.code).toBe("BAD_URL")
    expect(refused.error.length).toBeGreaterThan(10)
    // The server's model (whisper-tiny.en) is English-only: no translation, refused before the link is fetched.
    const translate = failureOf(await call(client, "submit_link", { url: `${links.origin}/media/talk.wav`, task: "translate" }))
    expect(translate.code).toBe("VALIDATION_FAILED")
    expect(translate.error).toContain("English-only")
    const long = failureOf(await call(client, "submit_link", { url: `${links.origin}/media/talk.wav`, prompt: "a ".repeat(225) }))
    expect(long).toMatchObject({ code: "VALIDATION_FAILED" })
    expect(long.error).toContain("225 tokens")
    const missing = failureOf(await call(client, "transcript", { job_id: crypto.randomUUID() }))
    expect(missing).toMatchObject({ code: "NOT_FOUND" })
    // Parameters that do not match the contract Schema never reach the service.
    const malformed = await call(client, "job_status", { job_id: "nope" })
    expect(malformed.isError).toBe(true)
    expect(malformed.content[0]!.text).toContain("Expected a UUID")
  })

  it("refuses a submit the balance cannot pay for with NO_CREDITS and a checkout link", async () => {
    const broke = (await server.account(undefined, { minutes: 0 })).key
    const client = await connect(broke)
    const refused = failureOf(await call(client, "submit_link", { url: `${links.origin}/media/talk.wav` })) as {
      code: string
      checkout_url?: string
    }
    expect(refused.code).toBe("NO_CREDITS")
    expect(refused.checkout_url).toMatch(/\/checkout\//)
  })

  it("refuses requests without a usable Bearer key at the HTTP level", async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
      })
    const none = await post({})
    expect(none.status).toBe(401)
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer /)
    expect(await none.json()).toMatchObject({ code: "MISSING_API_KEY" })

    const wrongPlace = await post({ "x-api-key": alice })
    expect(wrongPlace.status).toBe(401)
    expect(((await wrongPlace.json()) as { error: string }).error).toContain("Authorization: Bearer")

    const bad = await post({ authorization: "Bearer vb_not_a_real_key" })
    expect(bad.status).toBe(401)
    expect(bad.headers.get("www-authenticate")).toContain("invalid_token")
    expect(await bad.json()).toMatchObject({ code: "INVALID_API_KEY" })

    await expect(connect("vb_not_a_real_key")).rejects.toThrow()
  })
})
