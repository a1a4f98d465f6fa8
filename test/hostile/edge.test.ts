/**
 * Hostile input at the request edge (issue: hardening): JSON bodies are capped and refused
 * before they are read past the cap, deep nesting and strings Postgres cannot store are 422
 * with their location, a client that hangs up is a 499 in the request log and never an error
 * line, and a database that goes away answers 503 with Retry-After instead of 500.
 */
import { Option, Redacted } from "effect"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accepted, expectError, postJson, request, submitFile, waitForJob } from "../support/jobsClient.ts"
import { mediaRoot } from "../../services/storage/MediaStorage.ts"
import { onPostgres } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

let server: TestServer
let key: string
const standIn = makeStandIn({ delayMs: 20, steps: 1 })

beforeAll(async () => {
  server = await startServer("hostile-edge", {}, { pipeline: standIn.layer })
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
})

const port = () => Number(new URL(server.url).port)

/** Sends raw bytes on a fresh connection and returns the first response head (or "" if none). */
const rawExchange = (head: string, body: string | Buffer, options: { readonly closeAfterMs?: number } = {}) =>
  new Promise<string>((resolve) => {
    let answer = ""
    const socket = net.connect(port(), "127.0.0.1", () => {
      socket.write(head)
      socket.write(body)
    })
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1")
      if (answer.includes("\r\n\r\n")) {
        socket.destroy()
        resolve(answer)
      }
    })
    socket.on("error", () => resolve(answer))
    socket.on("close", () => resolve(answer))
    if (options.closeAfterMs !== undefined) setTimeout(() => socket.destroy(), options.closeAfterMs)
  })

describe("JSON body limit", () => {
  it("refuses a declared 600 MB JSON body with 413 BODY_TOO_LARGE without waiting for it", async () => {
    const started = Date.now()
    const head = await rawExchange(
      `POST /v1/jobs/status HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${600 * 1024 * 1024}\r\n\r\n`,
      `{"ids": ["`
    )
    expect(head).toMatch(/^HTTP\/1\.1 413/)
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it("stops reading a chunked JSON body at the limit: 413 with the limit in the body", async () => {
    const big = JSON.stringify({ ids: ["x".repeat(2 * 1024 * 1024)] })
    const response = await fetch(`${server.url}/v1/jobs/status`, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      // A stream body: fetch sends it chunked, with no Content-Length to refuse up front.
      body: new Blob([big]).stream(),
      duplex: "half"
    } as RequestInit)
    const body = await response.json() as { code: string; limit_bytes: number }
    expect(response.status).toBe(413)
    expect(body).toMatchObject({ code: "BODY_TOO_LARGE", limit_bytes: 1024 * 1024 })
  })

  it("refuses JSON nested deeper than 32 levels with 422", async () => {
    const deep = `${"[".repeat(5_000)}${"]".repeat(5_000)}`
    const response = await fetch(`${server.url}/v1/uploads/init`, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: `{"filename":"a.wav","size_bytes":10,"extra":${deep}}`
    })
    await expectError(response, 422, "VALIDATION_FAILED")
  })
})

describe("strings Postgres cannot store", () => {
  it("answers 422 with the field's location for NUL in uploads/init filename and content_type", async () => {
    for (const [field, payload] of [
      ["filename", { filename: "a\u0000.mp3", size_bytes: 10 }],
      ["content_type", { filename: "a.mp3", size_bytes: 10, content_type: "audio/mpeg\u0000" }]
    ] as const) {
      const response = await postJson(server, "/v1/uploads/init", payload, key)
      const body = await response.json() as { code: string; detail: Array<{ loc: Array<string> }> }
      expect(response.status, JSON.stringify(body)).toBe(422)
      expect(body.detail[0]!.loc).toEqual(["body", field])
    }
  })

  it("answers 422 for NUL and lone surrogates in a transcript correction, and keeps the transcript", async () => {
    const job = await accepted(await submitFile(server, { key, file: { name: "talk.wav", bytes: tinyWav() } }))
    expect((await waitForJob(server, key, job.job_id)).status).toBe("done")
    for (const text of ["x\u0000", "\ud800", "ok \udc00 ok"]) {
      const response = await fetch(`${server.url}/v1/jobs/${job.job_id}/transcript`, {
        method: "PATCH",
        headers: { "X-API-Key": key, "Content-Type": "application/json" },
        body: JSON.stringify({ segments: [{ index: 0, text }] })
      })
      const body = await response.json() as { code: string; detail: Array<{ loc: Array<string | number> }> }
      expect(response.status, JSON.stringify(body)).toBe(422)
      expect(body.detail[0]!.loc).toEqual(["body", "segments", 0, "text"])
    }
    const result = await request(server, "GET", `/v1/jobs/${job.job_id}/result?format=txt`, key)
    expect(result.status).toBe(200)
  })

  it("answers 422 for a NUL in a query value", async () => {
    const response = await request(server, "GET", "/v1/jobs?status=%00", key)
    const body = await response.json() as { code: string; detail: Array<{ loc: Array<string> }> }
    expect(response.status).toBe(422)
    expect(body.detail[0]!.loc).toEqual(["query", "status"])
  })

  it("answers 422 for a NUL in a multipart file name", async () => {
    const response = await submitFile(server, { key, file: { name: "a\u0000b.wav", bytes: tinyWav() } })
    await expectError(response, 422, "VALIDATION_FAILED")
  })
})

/**
 * Every number a body or query takes, sent out of range (issue 22: `until: -3.78e28` made an
 * invalid Date and a 500). Each operation gets an otherwise valid request so the number reaches
 * the handler if the contract lets it through; the answer must be below 500, and a value past
 * the field's declared bounds a 422 naming it. The first test keeps the table complete: every
 * numeric field of a request body or query of the API (/v1, /mcp) in /openapi.json is listed here.
 */
describe("out-of-range numbers", () => {
  type Json = Record<string, any>
  interface NumberField {
    readonly method: string
    /** `{job}` is a finished job of the caller. */
    readonly path: string
    readonly field: string
    readonly in: "body" | "query"
    /** The request with the number in place (bodies); queries send `field=value` alone. */
    readonly body?: (value: unknown) => Json
    /** Where a 422 names the field. */
    readonly loc: ReadonlyArray<string | number>
    /** The declared range (inclusive) and whether only integers are taken. */
    readonly min: number
    readonly max: number
    readonly integer: boolean
  }
  const safe = Number.MAX_SAFE_INTEGER
  const table: ReadonlyArray<NumberField> = [
    { method: "POST", path: "/v1/library/search", field: "limit", in: "body", body: (v) => ({ q: "hello", limit: v }), loc: ["body", "limit"], min: 1, max: 50, integer: true },
    { method: "POST", path: "/v1/library/search", field: "since", in: "body", body: (v) => ({ q: "hello", since: v }), loc: ["body", "since"], min: 0, max: 253402300799, integer: false },
    { method: "POST", path: "/v1/library/search", field: "until", in: "body", body: (v) => ({ q: "hello", until: v }), loc: ["body", "until"], min: 0, max: 253402300799, integer: false },
    { method: "POST", path: "/v1/library/search", field: "min_relevance", in: "body", body: (v) => ({ q: "hello", min_relevance: v }), loc: ["body", "min_relevance"], min: 0, max: 1, integer: false },
    { method: "GET", path: "/v1/jobs", field: "limit", in: "query", loc: ["query", "limit"], min: 1, max: 100, integer: true },
    { method: "GET", path: "/v1/jobs", field: "offset", in: "query", loc: ["query", "offset"], min: 0, max: safe, integer: true },
    { method: "POST", path: "/v1/jobs/{job}/clips", field: "start_s", in: "body", body: (v) => ({ start_s: v, end_s: 0.4 }), loc: ["body", "start_s"], min: 0, max: 36_000, integer: false },
    { method: "POST", path: "/v1/jobs/{job}/clips", field: "end_s", in: "body", body: (v) => ({ start_s: 0, end_s: v }), loc: ["body", "end_s"], min: 0, max: 36_000, integer: false },
    // Over 5 GB and still a safe integer: 413 FILE_TOO_LARGE, as the spec says for a file too large.
    { method: "POST", path: "/v1/uploads/init", field: "size_bytes", in: "body", body: (v) => ({ filename: "a.wav", size_bytes: v }), loc: ["body", "size_bytes"], min: 1, max: safe, integer: true },
    {
      method: "PATCH",
      path: "/v1/jobs/{job}/transcript",
      field: "segments.index",
      in: "body",
      body: (v) => ({ segments: [{ index: v, text: "corrected" }] }),
      loc: ["body", "segments", 0, "index"],
      min: 0,
      max: safe,
      integer: true
    },
    // Caption shaping (srt and vtt only: an in-range value on the default json is a 422 of its own).
    { method: "GET", path: "/v1/jobs/{job}/result", field: "max_chars_per_line", in: "query", loc: ["query", "max_chars_per_line"], min: 10, max: 200, integer: true },
    { method: "GET", path: "/v1/jobs/{job}/result", field: "max_lines_per_cue", in: "query", loc: ["query", "max_lines_per_cue"], min: 1, max: 5, integer: true },
    { method: "GET", path: "/v1/jobs/{job}/result", field: "max_cue_seconds", in: "query", loc: ["query", "max_cue_seconds"], min: 1, max: 30, integer: false },
    // Speaker hints, with diarize; the link is not one (400 BAD_URL) once the numbers pass.
    ...(["min_speakers", "max_speakers", "speakers_expected"] as const).flatMap((field): Array<NumberField> => [
      { method: "POST", path: "/v1/transcribe/url", field, in: "body", body: (v) => ({ url: "not a link", diarize: true, [field]: v }), loc: ["body", field], min: 1, max: 20, integer: true },
      { method: "POST", path: "/v1/uploads/init", field, in: "body", body: (v) => ({ filename: "a.wav", size_bytes: 10, diarize: true, [field]: v }), loc: ["body", field], min: 1, max: 20, integer: true }
    ]),
    // JSON-RPC's request id: any number is valid and only echoed back.
    { method: "POST", path: "/mcp", field: "id", in: "body", body: (v) => ({ jsonrpc: "2.0", id: v, method: "ping" }), loc: [], min: -Infinity, max: Infinity, integer: false }
  ]
  const numbers: ReadonlyArray<number> = [
    -3.78e28, 3.78e28, -1e308, 1e308, -(2 ** 63), 2 ** 63, 2 ** 53 + 2, -(2 ** 53), 8.64e15 + 1, -1, 0, -0, 0.5, 1e-320,
    2 ** 31, 2 ** 31 - 1, 2 ** 53 - 1, 8.64e12, 253402300800, 36_001, 5e9 + 1
  ]
  /** Query strings can say what JSON cannot: never a number in range. */
  const queryOnly: ReadonlyArray<string> = ["1e400", "-1e400", "NaN", "Infinity", "0x10", "99999999999999999999999"]

  let finished: string
  beforeAll(async () => {
    finished = (await accepted(await submitFile(server, { key, file: { name: "numbers.wav", bytes: tinyWav() } }))).job_id
    expect((await waitForJob(server, key, finished)).status).toBe("done")
  })

  const send = (entry: NumberField, value: unknown) => {
    const path = entry.path.replace("{job}", finished)
    if (entry.in === "query") {
      return fetch(`${server.url}${path}?${entry.field}=${encodeURIComponent(String(value))}`, { headers: { "X-API-Key": key } })
    }
    return fetch(`${server.url}${path}`, {
      method: entry.method,
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify(entry.body!(value))
    })
  }

  it("lists every numeric field of every request body and query in /openapi.json", async () => {
    const document = await (await fetch(`${server.url}/openapi.json`)).json() as Json
    const resolve = (schema: Json | undefined): Json | undefined =>
      schema?.["$ref"] === undefined ? schema : document["components"]["schemas"][String(schema["$ref"]).split("/").pop()!]
    const isNumeric = (schema: Json | undefined): boolean => {
      const resolved = resolve(schema)
      if (resolved === undefined) return false
      if (resolved["type"] === "number" || resolved["type"] === "integer") return true
      return [...(resolved["anyOf"] ?? []), ...(resolved["oneOf"] ?? []), ...(resolved["allOf"] ?? [])].some(isNumeric)
    }
    const found: Array<string> = []
    const walk = (where: string, schema: Json | undefined, prefix: string) => {
      const resolved = resolve(schema)
      for (const [name, property] of Object.entries((resolved?.["properties"] ?? {}) as Json)) {
        if (isNumeric(property)) found.push(`${where} ${prefix}${name}`)
        const inner = resolve(property as Json)
        if (inner?.["type"] === "array") walk(where, resolve(inner["items"]), `${prefix}${name}.`)
        else walk(where, inner, `${prefix}${name}.`)
      }
    }
    for (const [path, item] of Object.entries(document["paths"] as Json)) {
      // The key-authenticated API; the website's routes (/web, signed-in sessions) are the website's tests'.
      if (!path.startsWith("/v1/") && path !== "/mcp") continue
      for (const method of ["get", "post", "put", "patch", "delete"]) {
        const operation: Json | undefined = (item as Json)[method]
        if (operation === undefined) continue
        const where = `${method.toUpperCase()} ${path.replace(/\{job_id\}/, "{job}")}`
        for (const parameter of [...((item as Json)["parameters"] ?? []), ...(operation["parameters"] ?? [])] as Array<Json>) {
          // Query numbers are documented as strings of digits (that is what a query carries).
          const numericText = String(resolve(parameter["schema"])?.["pattern"] ?? "").includes("\\d")
          if (parameter["in"] === "query" && (isNumeric(parameter["schema"]) || numericText)) found.push(`${where} ${parameter["name"]}`)
        }
        walk(where, operation["requestBody"]?.["content"]?.["application/json"]?.["schema"], "")
      }
    }
    expect(found.sort()).toEqual(table.map((entry) => `${entry.method} ${entry.path} ${entry.field}`).sort())
  })

  it("answers 422 naming the field for values past its bounds, and never 5xx for any number", async () => {
    for (const entry of table) {
      const values: Array<number | string> = [...numbers, ...(entry.in === "query" ? queryOnly : [])]
      for (const value of values) {
        const response = await send(entry, value)
        const text = await response.text()
        const where = `${entry.method} ${entry.path} ${entry.field}=${String(value)} → ${response.status} ${text.slice(0, 300)}`
        expect(response.status, where).toBeLessThan(500)
        const inRange = typeof value === "number" && value >= entry.min && value <= entry.max &&
          (!entry.integer || Number.isSafeInteger(value))
        if (!inRange) {
          expect(response.status, where).toBe(422)
          expect((JSON.parse(text) as Json)["detail"], where).toEqual(expect.arrayContaining([expect.objectContaining({ loc: entry.loc })]))
        }
      }
    }
  })
})

describe("clients that hang up", () => {
  it("log 499 in the request line and no error line, however many pipelined requests they drop", async () => {
    const before = server.logs.length
    let pipelined = ""
    for (let i = 0; i < 50; i++) {
      pipelined += `POST /v1/jobs/status HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: 10\r\n\r\n{"ids":[]}`
    }
    pipelined += `POST /v1/jobs/status HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\n` +
      `Content-Length: 100000\r\n\r\n{"ids":`
    await rawExchange(pipelined, "", { closeAfterMs: 20 })
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    const lines = server.logs.slice(before).map((line) => JSON.parse(line) as { level: number; status?: number; msg: string })
    expect(lines.filter((line) => line.level >= 50)).toEqual([])
    expect(lines.filter((line) => line.msg === "request" && (line.status ?? 0) >= 500)).toEqual([])
  })
})

describe("database outage", () => {
  it.runIf(onPostgres)("answers 503 SERVICE_UNAVAILABLE with Retry-After while the database is unreachable, then recovers", async () => {
    // A TCP relay in front of this test's Postgres database: closing it is the outage.
    const target = new URL(Redacted.value(Option.getOrThrow(server.storage.databaseUrl)))
    const sockets = new Set<net.Socket>()
    let open = true
    const relay = net.createServer((client) => {
      if (!open) return client.destroy()
      const upstream = net.connect(Number(target.port || 5432), target.hostname)
      for (const s of [client, upstream]) {
        sockets.add(s)
        s.on("error", () => {})
        s.on("close", () => sockets.delete(s))
      }
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve))
    const relayed = new URL(target.href)
    relayed.host = `127.0.0.1:${(relay.address() as net.AddressInfo).port}`
    // A second process on the same database: it shares the first one's media directory, as it must.
    const outage = await startServer("hostile-edge-outage", {
      databaseUrl: Option.some(Redacted.make(relayed.href)),
      mediaDir: Option.some(mediaRoot({ dataDir: server.storage.dataDir, mediaDir: Option.none() }))
    }, {
      pipeline: standIn.layer
    })
    try {
      const { key: outageKey } = await outage.account()
      expect((await outage.get("/v1/me", { "X-API-Key": outageKey })).status).toBe(200)
      open = false
      for (const s of sockets) s.destroy()
      const response = await outage.get("/v1/me", { "X-API-Key": outageKey })
      const body = await response.json() as { code: string; retry_after: number }
      expect(response.status, JSON.stringify(body)).toBe(503)
      expect(body.code).toBe("SERVICE_UNAVAILABLE")
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      open = true
      let recovered = 0
      for (let i = 0; i < 20 && recovered !== 200; i++) {
        recovered = (await outage.get("/v1/me", { "X-API-Key": outageKey })).status
        if (recovered !== 200) await new Promise((resolve) => setTimeout(resolve, 500))
      }
      expect(recovered).toBe(200)
    } finally {
      open = true
      await outage.close()
      relay.close()
    }
  })
})
