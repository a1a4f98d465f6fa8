/**
 * `/openapi.json` against what the server really sends, over real sockets: every answer
 * below — successes and the error paths the rest of the suite covers (auth, browser
 * refusal, BAD_ID, MALFORMED_JSON, 415, 422 with `detail`, 404, 409, 402, 403, 410, 413,
 * 429 quota/concurrency/rate, direct-upload refusals, billing) — must have a status listed for its operation and a
 * body that validates against that status's schema. A finished job's result is checked
 * in every format. The stand-in pipeline keeps jobs fast; what is checked is the HTTP shape.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TranscriptStore } from "../../services/jobs/TranscriptStore.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import { rawRequest } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"
import { type Checked, makeChecker } from "./openApiCheck.ts"

let server: TestServer
let checker: ReturnType<typeof makeChecker>
let key: string

beforeAll(async () => {
  server = await startServer("openapi-responses", { rateLimitPerMinute: 10_000 }, {
    pipeline: makeStandIn({ delayMs: 50, steps: 1 }).layer
  })
  const spec = await (await server.get("/openapi.json")).json()
  checker = makeChecker(spec)
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
  if (checker !== undefined) console.log(`checked against /openapi.json:\n  ${[...checker.covered].sort().join("\n  ")}`)
})

interface Call {
  readonly key?: string | undefined
  readonly headers?: Record<string, string>
  readonly json?: unknown
  readonly body?: BodyInit
  readonly contentType?: string
}

/** Sends one request and checks the answer against the document; `status` is what the test expects. */
const call = async (method: string, path: string, status: number, options: Call = {}): Promise<Checked> => {
  const url = path.startsWith("http") ? path : `${server.url}${path}`
  const headers: Record<string, string> = { ...options.headers }
  if (options.key !== undefined) headers["X-API-Key"] = options.key
  if (options.json !== undefined) headers["Content-Type"] = "application/json"
  if (options.contentType !== undefined) headers["Content-Type"] = options.contentType
  const response = await fetch(url, {
    method,
    headers,
    body: options.json !== undefined ? JSON.stringify(options.json) : options.body ?? null
  })
  const checked = await checker.check(method, url, response)
  expect(checked.status, `${method} ${path}: ${JSON.stringify(checked.body)?.slice(0, 300)}`).toBe(status)
  return checked
}

const form = (file?: { name: string; bytes: Uint8Array; type?: string }, fields: Record<string, string> = {}) => {
  const body = new FormData()
  for (const [name, value] of Object.entries(fields)) body.append(name, value)
  if (file !== undefined) {
    body.append("file", new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.type ?? "audio/wav" }), file.name)
  }
  return body
}

const wav = (name = "clip.wav", delayMs?: number) => ({ name, bytes: tinyWav(delayMs === undefined ? undefined : { delayMs, steps: 2 }) })

const waitSettled = async (jobId: string, headers: Record<string, string> = {}) => {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const { body } = await call("GET", `/v1/jobs/${jobId}`, 200, { key, headers })
    if (body.status === "done" || body.status === "failed") return body
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`job ${jobId} did not settle`)
}

const missingId = "5b2f8a4e-1c3d-4e5f-9a6b-7c8d9e0f1a2b"

describe("the document", () => {
  it("describes errors without _tag and lists the request and response headers", async () => {
    const spec = await (await server.get("/openapi.json")).json() as Record<string, any>
    for (const [name, schema] of Object.entries(spec["components"]["schemas"] as Record<string, any>)) {
      expect(schema["properties"]?.["_tag"], `${name} documents a _tag`).toBeUndefined()
    }
    const getJob = spec["paths"]["/v1/jobs/{job_id}"]["get"]
    const parameters = getJob["parameters"].map((p: { name: string; in: string }) => `${p.in}:${p.name}`)
    expect(parameters).toEqual(expect.arrayContaining(["header:x-claim-token", "header:if-none-match", "path:job_id"]))
    expect(Object.keys(getJob["responses"]["200"]["headers"])).toContain("ETag")
    expect(Object.keys(getJob["responses"]["429"]["headers"])).toContain("Retry-After")
    const upload = spec["paths"]["/v1/transcribe"]["post"]
    expect(upload["parameters"].map((p: { name: string }) => p.name)).toContain("idempotency-key")
    expect(Object.keys(upload["responses"]["200"]["headers"])).toContain("X-Idempotent-Replay")
  })
})

describe("answers match /openapi.json", () => {
  it("system, identity, authentication and the browser refusal", async () => {
    await call("GET", "/healthz", 200)
    await call("GET", "/v1/me", 200)
    await call("GET", "/v1/me", 200, { key })
    await call("GET", "/v1/me", 401, { key: "vb_live_not-a-real-key" })
    await call("GET", "/v1/jobs", 401)
    const browser = await call("GET", "/v1/me", 403, { headers: { Origin: "https://example.com" } })
    expect(browser.body.code).toBe("BROWSER_FORBIDDEN")
    await call("GET", "/v1/jobs", 403, { key, headers: { Origin: "https://example.com" } })
  })

  it("multipart submit: accepted, replayed, and every refusal", async () => {
    const first = await call("POST", "/v1/transcribe", 202, { key, body: form(wav()), headers: { "Idempotency-Key": "oa-1" } })
    const replay = await call("POST", "/v1/transcribe", 200, { key, body: form(wav()), headers: { "Idempotency-Key": "oa-1" } })
    expect(replay.body.job_id).toBe(first.body.job_id)
    expect(replay.headers.get("x-idempotent-replay")).toBe("true")
    expect((await call("POST", "/v1/transcribe", 400, { key, body: form(wav()), headers: { "Idempotency-Key": "has space" } })).body.code)
      .toBe("BAD_IDEMPOTENCY_KEY")
    expect((await call("POST", "/v1/transcribe", 415, { key, body: form({ name: "notes.txt", bytes: tinyWav() }) })).body.code).toBe("BAD_EXT")
    expect((await call("POST", "/v1/transcribe", 415, { key, body: form({ name: "a.mp3", bytes: tinyWav(), type: "text/plain" }) })).body.code)
      .toBe("BAD_MIME")
    expect((await call("POST", "/v1/transcribe", 422, { key, body: form(wav(), { source: "podcast" }) })).body.code).toBe("BAD_SOURCE")
    expect((await call("POST", "/v1/transcribe", 422, { key, body: form(wav(), { language: "english" }) })).body.detail)
      .toEqual([expect.objectContaining({ loc: ["body", "language"] })])
    await call("POST", "/v1/transcribe", 422, { key, body: form(undefined, { language: "en" }) })
    await call("POST", "/v1/transcribe", 415, { key, json: { url: "https://example.com/a.mp3" } })
    expect((await call("POST", "/v1/transcribe", 403, { key, body: form(wav(), { webhook_url: "https://example.com/hook" }) })).body.code)
      .toBe("TIER_FORBIDDEN")
    const broke = await server.account(undefined, { minutes: 0 })
    expect((await call("POST", "/v1/transcribe", 402, { key: broke.key, body: form(wav()) })).body.code).toBe("NO_CREDITS")

    const crowded = form(wav(), Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`note${i}`, "x"])))
    await call("POST", "/v1/transcribe", 422, { key, body: crowded })
    // A form field over the 64 KiB field limit.
    await call("POST", "/v1/transcribe", 422, { key, body: form(wav(), { language: "x".repeat(70 * 1024) }) })
  })

  it("multipart submit: a body declared over 5 GB is refused with 413 before it is read", async () => {
    const url = new URL(server.url)
    const raw = await rawRequest(
      server.url,
      "POST /v1/transcribe HTTP/1.1\r\n" +
        `Host: ${url.host}\r\nX-API-Key: ${key}\r\n` +
        "Content-Type: multipart/form-data; boundary=vbboundary\r\n" +
        `Content-Length: ${5 * 1000 ** 3 + 50 * 1024 * 1024}\r\n\r\n`,
      "--vbboundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
    )
    const checked = await checker.check("POST", `${server.url}/v1/transcribe`, new Response(raw.body, { status: raw.status, headers: raw.headers }))
    expect(checked.status).toBe(413)
    expect(checked.body.code).toBe("FILE_TOO_LARGE")
  })

  it("keyless samples: claim tokens, their 401s, and the daily quota's 429", async () => {
    const client = { "X-Forwarded-For": "198.51.100.23" }
    const sample = await call("POST", "/v1/transcribe", 202, { body: form(wav()), headers: client })
    expect(sample.body.claim_token).toEqual(expect.any(String))
    const id = sample.body.job_id as string
    await call("GET", `/v1/jobs/${id}`, 200, { headers: { "X-Claim-Token": sample.body.claim_token } })
    expect((await call("GET", `/v1/jobs/${id}`, 401)).body.code).toBe("MISSING_API_KEY")
    expect((await call("GET", `/v1/jobs/${id}`, 401, { headers: { "X-Claim-Token": "not-the-token" } })).body.code).toBe("INVALID_API_KEY")
    await call("POST", "/v1/transcribe", 202, { body: form(wav()), headers: client })
    await call("POST", "/v1/transcribe", 202, { body: form(wav()), headers: client })
    const quota = await call("POST", "/v1/transcribe", 429, { body: form(wav()), headers: client })
    expect(quota.body.code).toBe("QUOTA_EXCEEDED")
    expect(Number(quota.headers.get("retry-after"))).toBe(quota.body.retry_after)
  })

  it("link submit: refusals and validation (nothing is fetched)", async () => {
    expect((await call("POST", "/v1/transcribe/url", 400, { key, json: { url: "just some words" } })).body.code).toBe("BAD_URL")
    expect((await call("POST", "/v1/transcribe/url", 400, { key, json: { url: "http://192.168.1.20/episode.mp3" } })).body.code)
      .toBe("UNSUPPORTED_HOST")
    await call("POST", "/v1/transcribe/url", 422, { key, json: {} })
    expect((await call("POST", "/v1/transcribe/url", 422, { key, json: { url: "https://example.com/a.mp3", source: "rss" } })).body.code)
      .toBe("BAD_SOURCE")
    expect((await call("POST", "/v1/transcribe/url", 400, { key, body: "{\"url\": ", contentType: "application/json" })).body.code)
      .toBe("MALFORMED_JSON")
    await call("POST", "/v1/transcribe/url", 415, { key, body: "url=x", contentType: "text/plain" })
  })

  it("a job from queued to done: reads, 304, NOT_READY, every result format, correction, delete, restore", async () => {
    const submitted = await call("POST", "/v1/transcribe", 202, { key, body: form(wav("slow.wav", 1_500)) })
    const id = submitted.body.job_id as string
    const early = await call("GET", `/v1/jobs/${id}`, 200, { key })
    const etag = early.headers.get("etag")!
    expect(etag).toEqual(expect.any(String))
    expect((await call("GET", `/v1/jobs/${id}/result`, 409, { key })).body.code).toBe("NOT_READY")
    await call("PATCH", `/v1/jobs/${id}/transcript`, 409, { key, json: { segments: [{ index: 0, text: "x" }] } })

    const done = await waitSettled(id)
    expect(done.status).toBe("done")
    const fresh = await call("GET", `/v1/jobs/${id}`, 200, { key })
    await call("GET", `/v1/jobs/${id}`, 304, { key, headers: { "If-None-Match": fresh.headers.get("etag")! } })

    const result = await call("GET", `/v1/jobs/${id}/result`, 200, { key })
    expect(result.body.segments.length).toBeGreaterThan(0)
    await call("GET", `/v1/jobs/${id}/result?format=json`, 200, { key })
    for (const format of ["txt", "srt", "vtt"]) {
      expect(typeof (await call("GET", `/v1/jobs/${id}/result?format=${format}`, 200, { key })).body).toBe("string")
    }
    expect((await call("GET", `/v1/jobs/${id}/result?format=docx`, 200, { key })).body).toBeInstanceOf(Uint8Array)
    await call("GET", `/v1/jobs/${id}/result?format=pdf`, 422, { key })

    const corrected = await call("PATCH", `/v1/jobs/${id}/transcript`, 200, { key, json: { segments: [{ index: 0, text: "Corrected." }] } })
    expect(corrected.body.segments[0].text).toBe("Corrected.")
    await call("PATCH", `/v1/jobs/${id}/transcript`, 422, { key, json: { segments: [] } })
    await call("PATCH", `/v1/jobs/${id}/transcript`, 400, { key, body: "{", contentType: "application/json" })
    await call("PATCH", `/v1/jobs/${id}/transcript`, 415, { key, body: "x", contentType: "text/plain" })

    await call("DELETE", `/v1/jobs/${id}`, 204, { key })
    await call("GET", `/v1/jobs/${id}`, 404, { key })
    await call("POST", `/v1/jobs/${id}/restore`, 200, { key })
    await call("GET", `/v1/jobs/${id}`, 200, { key })
  })

  it("insights: 200, NOT_READY, NO_SPEECH, 402 transcript_locked, BAD_ID, NOT_FOUND, 401", async () => {
    const slow = (await call("POST", "/v1/transcribe", 202, { key, body: form(wav("slow-insights.wav", 1_500)) })).body.job_id as string
    expect((await call("GET", `/v1/jobs/${slow}/insights`, 409, { key })).body.code).toBe("NOT_READY")
    const spoken = "Sea walls are expensive and they often push the erosion further down the beach while dune grass holds " +
      "the sand together and costs almost nothing so volunteers plant it every Saturday on the northern beaches."
    const long = (await call("POST", "/v1/transcribe", 202, {
      key,
      body: form({ name: "talk.wav", bytes: tinyWav({ text: spoken }) })
    })).body.job_id as string
    expect((await waitSettled(long)).status).toBe("done")
    const answer = await call("GET", `/v1/jobs/${long}/insights`, 200, { key })
    expect(answer.body.insights.summary.sentences.length).toBeGreaterThan(0)
    // The stand-in's default transcript is one short sentence: a memo gets insights sized to it.
    expect((await waitSettled(slow)).status).toBe("done")
    expect((await call("GET", `/v1/jobs/${slow}/insights`, 200, { key })).body.insights.summary.sentences.length).toBe(1)
    // NO_SPEECH only when there is (next to) no speech.
    const silent = (await call("POST", "/v1/transcribe", 202, {
      key,
      body: form({ name: "silence.wav", bytes: tinyWav({ silent: true }) })
    })).body.job_id as string
    expect((await waitSettled(silent)).status).toBe("done")
    expect((await call("GET", `/v1/jobs/${silent}/insights`, 409, { key })).body.code).toBe("NO_SPEECH")
    await server.run(Effect.gen(function*() {
      yield* (yield* SqlClient.SqlClient)`UPDATE jobs SET locked = true WHERE id = ${long}`.pipe(Effect.orDie)
    }))
    expect((await call("GET", `/v1/jobs/${long}/insights`, 402, { key })).body.code).toBe("transcript_locked")
    expect((await call("GET", "/v1/jobs/not-a-uuid/insights", 400, { key })).body.code).toBe("BAD_ID")
    expect((await call("GET", `/v1/jobs/${missingId}/insights`, 404, { key })).body.code).toBe("NOT_FOUND")
    await call("GET", `/v1/jobs/${long}/insights`, 401)
  })

  it("library search, clip candidates and clip search: 200, 422, 409, 402, 400, 404, 401, 415, 400 MALFORMED_JSON", async () => {
    const spoken = "Here's the thing about tides. The moon pulls the sea twice a day, and the harbour empties at noon."
    const job = (await call("POST", "/v1/transcribe", 202, { key, body: form({ name: "tides.wav", bytes: tinyWav({ text: spoken }) }) })).body.job_id as string
    const slow = (await call("POST", "/v1/transcribe", 202, { key, body: form(wav("slow-search.wav", 1_500)) })).body.job_id as string
    expect((await call("GET", `/v1/jobs/${slow}/clips/candidates`, 409, { key })).body.code).toBe("NOT_READY")
    expect((await call("GET", `/v1/jobs/${slow}/clips/search?q=tides`, 409, { key })).body.code).toBe("NOT_READY")
    expect((await waitSettled(job)).status).toBe("done")
    const deadline = Date.now() + 20_000
    while (Date.now() < deadline) {
      const { body } = await call("POST", "/v1/library/search", 200, { key, json: { q: "when does the harbour empty", limit: 5 } })
      if (body.hits.some((hit: { job_id: string }) => hit.job_id === job)) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect((await call("GET", `/v1/jobs/${job}/clips/search?q=moon`, 200, { key })).body.moments.length).toBeGreaterThan(0)
    // A 5-second recording has no moment of 10 to 60 seconds.
    expect((await call("GET", `/v1/jobs/${job}/clips/candidates?kind=hook`, 200, { key })).body.candidates).toEqual([])
    await call("GET", `/v1/jobs/${job}/clips/candidates`, 200, { key })
    for (const body of [{ q: "" }, { q: "x".repeat(501) }, { q: "ok", limit: 0 }, {}]) {
      expect((await call("POST", "/v1/library/search", 422, { key, json: body })).body.code).toBe("VALIDATION_FAILED")
    }
    expect((await call("POST", "/v1/library/search", 422, { key, json: { q: "   " } })).body.detail[0].loc).toEqual(["body", "q"])
    expect((await call("GET", `/v1/jobs/${job}/clips/candidates?kind=viral`, 422, { key })).body.code).toBe("VALIDATION_FAILED")
    expect((await call("GET", `/v1/jobs/${job}/clips/search`, 422, { key })).body.code).toBe("VALIDATION_FAILED")
    expect((await call("POST", "/v1/library/search", 400, { key, body: "{", contentType: "application/json" })).body.code).toBe("MALFORMED_JSON")
    expect((await call("POST", "/v1/library/search", 415, { key, body: "q=x", contentType: "text/plain" })).body.code).toBe("UNSUPPORTED_CONTENT_TYPE")
    await call("POST", "/v1/library/search", 401, { json: { q: "tides" } })
    for (const suffix of ["candidates", "search?q=tides"]) {
      expect((await call("GET", `/v1/jobs/not-a-uuid/clips/${suffix}`, 400, { key })).body.code).toBe("BAD_ID")
      expect((await call("GET", `/v1/jobs/${missingId}/clips/${suffix}`, 404, { key })).body.code).toBe("NOT_FOUND")
    }
    await server.run(Effect.gen(function*() {
      yield* (yield* SqlClient.SqlClient)`UPDATE jobs SET locked = true WHERE id = ${job}`.pipe(Effect.orDie)
    }))
    expect((await call("GET", `/v1/jobs/${job}/clips/candidates`, 402, { key })).body.code).toBe("transcript_locked")
    expect((await call("GET", `/v1/jobs/${job}/clips/search?q=moon`, 402, { key })).body.code).toBe("transcript_locked")
  })

  it("BAD_ID and NOT_FOUND on every job route", async () => {
    for (const [method, suffix] of [["GET", ""], ["DELETE", ""], ["GET", "/result"], ["POST", "/restore"]] as const) {
      expect((await call(method, `/v1/jobs/not-a-uuid${suffix}`, 400, { key })).body.code).toBe("BAD_ID")
      expect((await call(method, `/v1/jobs/${missingId}${suffix}`, 404, { key })).body.code).toBe("NOT_FOUND")
    }
    const patch = { key, json: { segments: [{ index: 0, text: "x" }] } }
    expect((await call("PATCH", "/v1/jobs/not-a-uuid/transcript", 400, patch)).body.code).toBe("BAD_ID")
    await call("PATCH", `/v1/jobs/${missingId}/transcript`, 404, patch)
    const stranger = (await server.account()).key
    const mine = await call("POST", "/v1/transcribe", 202, { key, body: form(wav()) })
    await call("GET", `/v1/jobs/${mine.body.job_id}`, 404, { key: stranger })
  })

  it("job list and batch status", async () => {
    const list = await call("GET", "/v1/jobs?limit=5", 200, { key })
    expect(list.body.jobs.length).toBeGreaterThan(0)
    await call("GET", "/v1/jobs?status=done&offset=0", 200, { key })
    await call("GET", "/v1/jobs?status=finished", 422, { key })
    await call("GET", "/v1/jobs?limit=0", 422, { key })
    const batch = await call("POST", "/v1/jobs/status", 200, { key, json: { ids: [list.body.jobs[0].job_id, missingId] } })
    expect(batch.body.not_found).toEqual([missingId])
    await call("POST", "/v1/jobs/status", 422, { key, json: { ids: [] } })
    await call("POST", "/v1/jobs/status", 422, { key, json: { ids: ["not-a-uuid"] } })
    expect((await call("POST", "/v1/jobs/status", 400, { key, body: "{\"ids\": [", contentType: "application/json" })).body.code)
      .toBe("MALFORMED_JSON")
    await call("POST", "/v1/jobs/status", 401, { json: { ids: [missingId] } })
  })

  it("direct upload: init, bytes, commit, replayed commit, and the refusals of each step", async () => {
    const bytes = tinyWav()
    const ticket = (await call("POST", "/v1/uploads/init", 200, { key, json: { filename: "direct.wav", size_bytes: bytes.length } })).body
    const signed = new URL(ticket.upload_url)

    const tampered = new URL(signed)
    tampered.searchParams.set("signature", "0".repeat(64))
    expect((await call("PUT", tampered.href, 403, { body: bytes as Uint8Array<ArrayBuffer>, headers: ticket.headers })).body.code).toBe("KEY_MISMATCH")
    await call("PUT", `${signed.origin}${signed.pathname}`, 422, { body: bytes as Uint8Array<ArrayBuffer>, headers: ticket.headers })
    await call("PUT", `${server.url}/v1/uploads/not-a-uuid/bytes${signed.search}`, 400, { body: bytes as Uint8Array<ArrayBuffer> })
    expect((await call("POST", `/v1/uploads/${ticket.job_id}/commit`, 400, { key, json: { object_key: ticket.object_key, options: ticket.options } })).body.code)
      .toBe("UPLOAD_MISSING")
    expect((await call("PUT", signed.href, 400, { body: bytes.subarray(0, 10) as Uint8Array<ArrayBuffer>, headers: ticket.headers })).body.code)
      .toBe("SIZE_MISMATCH")
    await call("PUT", signed.href, 200, { body: bytes as Uint8Array<ArrayBuffer>, headers: ticket.headers })

    const commit = { object_key: ticket.object_key, options: ticket.options }
    const other = (await server.account()).key
    expect((await call("POST", `/v1/uploads/${ticket.job_id}/commit`, 403, { key: other, json: commit })).body.code).toBe("KEY_MISMATCH")
    await call("POST", `/v1/uploads/${ticket.job_id}/commit`, 202, { key, json: commit })
    await call("POST", `/v1/uploads/${ticket.job_id}/commit`, 200, { key, json: commit })
    // The URL is spent once committed.
    expect((await call("PUT", signed.href, 410, { body: bytes as Uint8Array<ArrayBuffer>, headers: ticket.headers })).body.code)
      .toBe("UPLOAD_EXPIRED")
    await call("POST", "/v1/uploads/not-a-uuid/commit", 400, { key, json: commit })
    await call("POST", `/v1/uploads/${missingId}/commit`, 404, { key, json: commit })
    await call("POST", `/v1/uploads/${ticket.job_id}/commit`, 422, { key, json: { object_key: 7 } })
    await call("POST", `/v1/uploads/${ticket.job_id}/commit`, 400, { key, body: "{", contentType: "application/json" })

    expect((await call("POST", "/v1/uploads/init", 415, { key, json: { filename: "notes.txt", size_bytes: 10 } })).body.code).toBe("BAD_EXT")
    expect((await call("POST", "/v1/uploads/init", 413, { key, json: { filename: "huge.wav", size_bytes: 6 * 1000 ** 3 } })).body.code)
      .toBe("FILE_TOO_LARGE")
    await call("POST", "/v1/uploads/init", 422, { key, json: { filename: "a.wav", size_bytes: 0 } })
    await call("POST", "/v1/uploads/init", 400, { key, json: { filename: "a.wav", size_bytes: 10 }, headers: { "Idempotency-Key": "bad key" } })
    await call("POST", "/v1/uploads/init", 401, { json: { filename: "a.wav", size_bytes: 10 } })
  })

  it("billing: balance, usage, pay links and their refusals, pages, payment notices", async () => {
    await call("GET", "/v1/credits", 200, { key })
    await call("GET", "/v1/usage", 200, { key })
    await call("GET", "/v1/usage", 401)
    const link = await call("POST", "/v1/checkout", 200, { key, json: { sku: "mini-4" } })
    await call("GET", `/v1/checkout/${link.body.id}`, 200, { key })
    await call("GET", "/v1/checkout/txn_missing", 404, { key })
    expect((await call("POST", "/v1/checkout", 400, { key, json: { sku: "gold-forever" } })).body.code).toBe("UNKNOWN_SKU")
    await call("POST", "/v1/checkout", 422, { key, json: { sku: 42 } })
    await call("POST", "/v1/checkout", 400, { key, body: "{\"sku\": ", contentType: "application/json" })
    await call("POST", "/v1/checkout", 415, { key, body: "sku=mini-4", contentType: "text/plain" })
    await call("GET", new URL(link.body.checkout_url).pathname, 200)
    await call("GET", "/checkout/txn_missing", 404)
    await call("GET", "/pricing", 200)
    await call("POST", "/webhooks/paddle", 422, { json: { event_type: "transaction.completed" }, headers: { "Paddle-Signature": "ts=1;h1=00" } })
  })
})

describe("routes beside the HttpApi, and the request edge on media routes", () => {
  const bearer = (value: string) => ({ Authorization: `Bearer ${value}` })
  const mcpHeaders = { Accept: "application/json, text/event-stream" }
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "openapi-test", version: "1" } }
  }

  it("/readyz and /metrics: ready, not ready (503 naming the check), metrics off (404), a NUL in the query (422)", async () => {
    expect((await call("GET", "/readyz", 200)).body.status).toBe("ready")
    const metrics = await call("GET", "/metrics", 200)
    expect(metrics.body).toContain("verbatim_http_requests_total")
    expect((await call("GET", "/readyz?probe=%00", 422)).body.detail[0].loc).toEqual(["query", "probe"])
    await call("GET", "/readyz", 403, { headers: { Origin: "https://example.com" } })
    const emptyModels = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-openapi-no-models-"))
    const bare = await startServer("openapi-not-ready", { modelsDir: emptyModels, metrics: false }, { pipeline: makeStandIn().layer })
    try {
      const strict = makeChecker(await (await bare.get("/openapi.json")).json())
      const notReady = await strict.check("GET", `${bare.url}/readyz`, await bare.get("/readyz"))
      expect(notReady.status).toBe(503)
      expect(notReady.body).toMatchObject({ code: "NOT_READY_TO_SERVE", failing: ["models"] })
      const off = await strict.check("GET", `${bare.url}/metrics`, await bare.get("/metrics"))
      expect(off.status).toBe(404)
    } finally {
      await bare.close()
    }
  })

  it("POST /v1/audio/transcriptions: every response_format and the refusals in OpenAI's shape", async () => {
    const openAi = (fields: Record<string, string>, file: { name: string; bytes: Uint8Array; type?: string } | undefined = wav()) =>
      form(file, fields)
    const json = await call("POST", "/v1/audio/transcriptions", 200, { headers: bearer(key), body: openAi({ model: "whisper-1" }) })
    expect(json.body.text).toEqual(expect.any(String))
    expect(json.headers.get("x-verbatim-job-id")).toEqual(expect.any(String))
    const verbose = await call("POST", "/v1/audio/transcriptions", 200, {
      headers: bearer(key),
      body: openAi({ model: "whisper-1", response_format: "verbose_json", "timestamp_granularities[]": "word" })
    })
    expect(verbose.body.task).toBe("transcribe")
    for (const format of ["text", "srt", "vtt"]) {
      const rendered = await call("POST", "/v1/audio/transcriptions", 200, { headers: bearer(key), body: openAi({ model: "whisper-1", response_format: format }) })
      expect(typeof rendered.body).toBe("string")
    }
    expect((await call("POST", "/v1/audio/transcriptions", 400, { headers: bearer(key), body: openAi({}) })).body.error.param).toBe("model")
    await call("POST", "/v1/audio/transcriptions", 400, { headers: bearer(key), json: { model: "whisper-1" } })
    await call("POST", "/v1/audio/transcriptions", 401, { body: openAi({ model: "whisper-1" }) })
    await call("POST", "/v1/audio/transcriptions", 401, { headers: bearer("vb_live_not-a-real-key"), body: openAi({ model: "whisper-1" }) })
    expect((await call("POST", "/v1/audio/transcriptions", 415, {
      headers: bearer(key),
      body: openAi({ model: "whisper-1" }, { name: "notes.txt", bytes: tinyWav() })
    })).body.error.code).toBe("bad_ext")
    const broke = await server.account(undefined, { minutes: 0 })
    expect((await call("POST", "/v1/audio/transcriptions", 402, { headers: bearer(broke.key), body: openAi({ model: "whisper-1" }) })).body.error.type)
      .toBe("insufficient_quota")
    expect((await call("POST", "/v1/audio/transcriptions", 403, { headers: { ...bearer(key), Origin: "https://example.com" }, body: openAi({ model: "whisper-1" }) }))
      .body.code).toBe("BROWSER_FORBIDDEN")
    await call("POST", "/v1/audio/transcriptions?x=%00", 422, { headers: bearer(key), body: openAi({ model: "whisper-1" }) })
  })

  it("prompt and task on the submit paths, and POST /v1/audio/translations (issue 26)", async () => {
    const tooLong = "a ".repeat(225)
    const names = "Laura Bennett, Samuel Ortiz, Priya, Coastline"
    await call("POST", "/v1/transcribe", 202, { key, body: form(wav(), { prompt: names, task: "transcribe" }) })
    expect((await call("POST", "/v1/transcribe", 422, { key, body: form(wav(), { prompt: tooLong }) })).body.detail[0].loc)
      .toEqual(["body", "prompt"])
    // This server's model is whisper-tiny.en: English-only, no translation.
    expect((await call("POST", "/v1/transcribe", 422, { key, body: form(wav(), { task: "translate" }) })).body.detail[0].loc)
      .toEqual(["body", "task"])
    await call("POST", "/v1/transcribe", 422, { key, body: form(wav(), { task: "summarise" }) })
    await call("POST", "/v1/transcribe/url", 422, { key, json: { url: "https://example.com/a.mp3", prompt: tooLong } })
    await call("POST", "/v1/transcribe/url", 422, { key, json: { url: "https://example.com/a.mp3", task: "translate" } })
    const ticket = await call("POST", "/v1/uploads/init", 200, {
      key,
      json: { filename: "a.wav", size_bytes: 100, prompt: names, task: "transcribe" }
    })
    expect(ticket.body.options).toMatchObject({ prompt: names, task: "transcribe" })
    await call("POST", "/v1/uploads/init", 422, { key, json: { filename: "a.wav", size_bytes: 100, prompt: tooLong } })

    const openAi = (fields: Record<string, string>) => form(wav(), fields)
    await call("POST", "/v1/audio/transcriptions", 200, { headers: bearer(key), body: openAi({ model: "whisper-1", prompt: names }) })
    expect((await call("POST", "/v1/audio/transcriptions", 400, { headers: bearer(key), body: openAi({ model: "whisper-1", prompt: tooLong }) }))
      .body.error).toMatchObject({ code: "invalid_value", param: "prompt" })
    expect((await call("POST", "/v1/audio/translations", 400, { headers: bearer(key), body: openAi({ model: "whisper-1" }) })).body.error.code)
      .toBe("invalid_value")
    await call("POST", "/v1/audio/translations", 401, { body: openAi({ model: "whisper-1" }) })
    await call("POST", "/v1/audio/translations", 400, { headers: bearer(key), body: openAi({}) })

    // A multilingual model translates: every answer of the route on a whisper-base server.
    const multilingual = await startServer("openapi-translations", { model: "whisper-base" }, {
      pipeline: makeStandIn({ delayMs: 20, steps: 1 }).layer
    })
    try {
      const other = (await multilingual.account()).key
      const url = `${multilingual.url}/v1/audio/translations`
      const json = await call("POST", url, 200, { headers: bearer(other), body: openAi({ model: "whisper-1", prompt: names }) })
      expect(json.body.text).toEqual(expect.any(String))
      const verbose = await call("POST", url, 200, { headers: bearer(other), body: openAi({ model: "whisper-1", response_format: "verbose_json" }) })
      expect(verbose.body.task).toBe("translate")
      for (const format of ["text", "srt", "vtt"]) {
        expect(typeof (await call("POST", url, 200, { headers: bearer(other), body: openAi({ model: "whisper-1", response_format: format }) })).body)
          .toBe("string")
      }
      await call("POST", `${multilingual.url}/v1/transcribe`, 202, { key: other, body: form(wav(), { task: "translate" }) })
    } finally {
      await multilingual.close()
    }
  })

  it("word confidence, caption shaping and speaker hints (issue 26)", async () => {
    const id = (await call("POST", "/v1/transcribe", 202, { key, body: form(wav(), { diarize: "true", speakers_expected: "2" }) })).body.job_id
    await waitSettled(id)
    // The stand-in has no word times: the stored transcript gets words with their confidence.
    const words = "Good morning everyone, today we review the quarterly budget and the hiring plan.".split(" ")
      .map((text, i) => ({ start: i * 0.4, end: i * 0.4 + 0.35, text, confidence: 0.5 + i / 40 }))
    await server.run(TranscriptStore.use((store) =>
      store.save(JobId.make(id), {
        text: words.map((w) => w.text).join(" "),
        language: "en",
        duration: 6,
        speech_detected: true,
        segments: [{ start: 0, end: 5.6, text: words.map((w) => w.text).join(" "), speaker: "SPEAKER_00", words }]
      })
    ))
    const json = await call("GET", `/v1/jobs/${id}/result`, 200, { key })
    expect(json.body.segments[0].words[1].confidence).toBeCloseTo(0.525)
    for (const format of ["srt", "vtt"]) {
      const shaped = await call("GET", `/v1/jobs/${id}/result?format=${format}&max_chars_per_line=20&max_lines_per_cue=2&max_cue_seconds=4`, 200, { key })
      expect(shaped.body).toContain("budget")
    }
    for (const query of ["format=json&max_chars_per_line=42", "format=srt&max_chars_per_line=5", "format=vtt&max_lines_per_cue=9", "format=srt&max_cue_seconds=60"]) {
      expect((await call("GET", `/v1/jobs/${id}/result?${query}`, 422, { key })).body.detail.length).toBeGreaterThan(0)
    }
    await call("POST", "/v1/transcribe", 422, { key, body: form(wav(), { max_speakers: "2" }) })
    await call("POST", "/v1/transcribe", 422, { key, body: form(wav(), { diarize: "true", min_speakers: "3", max_speakers: "2" }) })
    await call("POST", "/v1/transcribe/url", 422, { key, json: { url: "https://example.com/a.mp3", diarize: true, speakers_expected: 21 } })
    const ticket = await call("POST", "/v1/uploads/init", 200, {
      key,
      json: { filename: "a.wav", size_bytes: 100, diarize: true, min_speakers: 2, max_speakers: 4 }
    })
    expect(ticket.body.options).toMatchObject({ min_speakers: 2, max_speakers: 4 })
    await call("POST", "/v1/uploads/init", 422, { key, json: { filename: "a.wav", size_bytes: 100, speakers_expected: 2 } })
  })

  it("POST and DELETE /mcp: a session from initialize to its end, and every refusal", async () => {
    const started = await call("POST", "/mcp", 200, { headers: { ...bearer(key), ...mcpHeaders }, json: initialize })
    expect(started.body.result.serverInfo.name).toBe("verbatim")
    const session = started.headers.get("mcp-session-id")!
    expect(session).toEqual(expect.any(String))
    const inSession = { ...bearer(key), ...mcpHeaders, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" }
    await call("POST", "/mcp", 202, { headers: inSession, json: { jsonrpc: "2.0", method: "notifications/initialized" } })
    const tools = await call("POST", "/mcp", 200, { headers: inSession, json: { jsonrpc: "2.0", id: 2, method: "tools/list" } })
    expect(tools.body.result.tools.length).toBeGreaterThan(5)
    expect((await call("POST", "/mcp", 200, { headers: inSession, body: "{", contentType: "application/json" })).body.error.code).toBe(-32700)
    expect((await call("POST", "/mcp", 400, { headers: { ...bearer(key), ...mcpHeaders }, json: { jsonrpc: "2.0", id: 3, method: "tools/list" } }))
      .body.error.code).toBe(-32600)
    expect((await call("POST", "/mcp", 400, { headers: inSession, json: [{ jsonrpc: "2.0", id: 4, method: "ping" }] })).body.code).toBe("BAD_REQUEST")
    const noKey = await call("POST", "/mcp", 401, { headers: mcpHeaders, json: initialize })
    expect(noKey.headers.get("www-authenticate")).toContain("Bearer")
    await call("POST", "/mcp", 401, { headers: { ...bearer("vb_live_not-a-real-key"), ...mcpHeaders }, json: initialize })
    await call("POST", "/mcp", 404, { headers: { ...inSession, "mcp-session-id": "no-such-session" }, json: { jsonrpc: "2.0", id: 5, method: "ping" } })
    await call("POST", "/mcp", 406, { headers: bearer(key), json: initialize })
    await call("POST", "/mcp", 415, { headers: { ...bearer(key), ...mcpHeaders }, body: "x", contentType: "text/plain" })
    expect((await call("POST", "/mcp", 422, {
      headers: inSession,
      json: { jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "job_status", arguments: { job_id: "a\u0000b" } } }
    })).body.detail[0].loc).toEqual(["body", "params", "arguments", "job_id"])
    await call("POST", "/mcp", 403, { headers: { ...bearer(key), ...mcpHeaders, Origin: "https://example.com" }, json: initialize })
    await call("DELETE", "/mcp", 400, { headers: bearer(key) })
    await call("DELETE", "/mcp", 204, { headers: { ...bearer(key), "mcp-session-id": session } })
    await call("DELETE", "/mcp", 404, { headers: { ...bearer(key), "mcp-session-id": session } })
    await call("DELETE", "/mcp", 401, { headers: { "mcp-session-id": session } })
  })

  it("a NUL in the query of the signed media routes is 422, as documented", async () => {
    for (const route of [`/v1/jobs/${missingId}/audio`, `/v1/clips/${missingId}/video`, `/v1/jobs/${missingId}/audio/url`, "/v1/me", "/healthz"]) {
      expect((await call("GET", `${route}?token=%00`, 422)).body.detail).toEqual([{ loc: ["query", "token"], msg: expect.any(String) }])
    }
  })

  it("a JSON body over 1 MiB on a route that takes no body is 413 BODY_TOO_LARGE, as documented", async () => {
    for (const [method, route] of [["DELETE", `/v1/jobs/${missingId}`], ["POST", `/v1/jobs/${missingId}/restore`], ["DELETE", `/v1/clips/${missingId}`]] as const) {
      const url = new URL(server.url)
      const raw = await rawRequest(
        server.url,
        `${method} ${route} HTTP/1.1\r\nHost: ${url.host}\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n`,
        "{"
      )
      const checked = await checker.check(method, `${server.url}${route}`, new Response(raw.body, { status: raw.status, headers: raw.headers }))
      expect(checked.body.code).toBe("BODY_TOO_LARGE")
    }
  })

  it("/docs renders the document without a try-it client (browsers are refused)", async () => {
    const page = await server.get("/docs")
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain("\"hideTestRequestButton\":true")
    expect(html).toContain("\"hideClientButton\":true")
    expect(html).toContain("/v1/audio/transcriptions")
    expect(html).toContain("curl")
  })
})

describe("concurrency cap", () => {
  it("answers 429 CONCURRENCY_LIMIT on multipart submit and commit as documented", async () => {
    const owner = (await server.account()).key
    const running: Array<string> = []
    try {
      for (let i = 0; i < 5; i++) {
        const long = { name: `long${i}.wav`, bytes: tinyWav({ delayMs: 60_000, steps: 300 }) }
        running.push((await call("POST", "/v1/transcribe", 202, { key: owner, body: form(long) })).body.job_id)
      }
      const refused = await call("POST", "/v1/transcribe", 429, { key: owner, body: form(wav()) })
      expect(refused.body).toMatchObject({ code: "CONCURRENCY_LIMIT", limit: 5, running: 5 })
      const bytes = tinyWav()
      const ticket = (await call("POST", "/v1/uploads/init", 200, { key: owner, json: { filename: "later.wav", size_bytes: bytes.length } })).body
      await call("PUT", ticket.upload_url, 200, { body: bytes as Uint8Array<ArrayBuffer>, headers: ticket.headers })
      const capped = await call("POST", `/v1/uploads/${ticket.job_id}/commit`, 429, {
        key: owner,
        json: { object_key: ticket.object_key, options: ticket.options }
      })
      expect(capped.body.code).toBe("CONCURRENCY_LIMIT")
    } finally {
      for (const id of running) await call("DELETE", `/v1/jobs/${id}`, 204, { key: owner })
    }
  })
})

describe("rate limits", () => {
  it("answers 429 RATE_LIMITED with Retry-After as documented", async () => {
    const limited = await startServer("openapi-rate", { rateLimitPerMinute: 2 }, { pipeline: makeStandIn().layer })
    try {
      const spec = await (await limited.get("/openapi.json")).json()
      const strict = makeChecker(spec)
      const owner = (await limited.account()).key
      let last: Checked | undefined
      for (let i = 0; i < 4; i++) {
        last = await strict.check("GET", `${limited.url}/v1/usage`, await limited.get("/v1/usage", { "X-API-Key": owner }))
      }
      expect(last!.status).toBe(429)
      expect(last!.body.code).toBe("RATE_LIMITED")
      expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0)
    } finally {
      await limited.close()
    }
  })
})
