/**
 * The submission use case (services/intake/SubmitJob.ts) seen through every path that calls it,
 * over real sockets: multipart, link, direct upload (init → PUT → commit), the OpenAI-compatible
 * route and the MCP `submit_link` tool (official SDK client). The same
 * options give the same job row (one builder, one set of defaults); each job is charged once; the
 * same refusal (a language the English-only model cannot take, an empty balance) comes from the
 * same check on every path, in each path's own shape, and leaves no job and no stored file.
 * The speech pipeline is the stand-in.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Exit, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { UploadTickets } from "../../services/uploads/UploadTickets.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import { accepted, expectError, listJobs, postJson, submitFile, submitUrl, waitForJob } from "../support/jobsClient.ts"
import { respond, startTestServer, type TestServer as LinkServer } from "../support/linkTestServer.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

const scope = Effect.runSync(Scope.make())
const standIn = makeStandIn({ delayMs: 50, steps: 1 })
const media = tinyWav()

let server: TestServer
let links: LinkServer

beforeAll(async () => {
  links = await Effect.runPromise(Scope.provide(scope)(startTestServer({
    "/a.wav": respond(200, { "content-type": "audio/wav" }, media)
  })))
  server = await startServer("submit-paths", { rateLimitPerMinute: 10_000, fetchAllow: [`127.0.0.1:${links.port}`] }, {
    pipeline: standIn.layer
  })
})
afterAll(async () => {
  await server?.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

interface Ticket {
  readonly job_id: string
  readonly object_key: string
  readonly upload_url: string
  readonly options: Record<string, unknown>
}

const openAi = (key: string, fields: Record<string, string>) => {
  const form = new FormData()
  form.append("model", "whisper-1")
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  form.append("file", new Blob([media as Uint8Array<ArrayBuffer>], { type: "audio/wav" }), "a.wav")
  return fetch(`${server.url}/v1/audio/transcriptions`, { method: "POST", headers: { Authorization: `Bearer ${key}` }, body: form })
}

/** init → PUT → commit; the commit's response. */
const directUpload = async (key: string, options: Record<string, unknown>) => {
  const init = await postJson(server, "/v1/uploads/init", { filename: "a.wav", size_bytes: media.length, content_type: "audio/wav", ...options }, key)
  const ticket = await init.json() as Ticket
  expect(init.status, JSON.stringify(ticket)).toBe(200)
  const put = await fetch(ticket.upload_url, {
    method: "PUT",
    headers: { "Content-Type": "application/octet-stream" },
    body: media as Uint8Array<ArrayBuffer>
  })
  expect(put.status).toBe(200)
  return postJson(server, `/v1/uploads/${ticket.job_id}/commit`, { object_key: ticket.object_key, options: ticket.options }, key)
}

/** The MCP `submit_link` tool over `/mcp`; the tool result. */
const mcpSubmitLink = async (key: string, args: Record<string, unknown>) => {
  const client = new Client({ name: "submit-paths", version: "1.0.0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } })
  )
  try {
    const result = await client.callTool({ name: "submit_link", arguments: args }) as {
      readonly isError?: boolean
      readonly content: Array<{ readonly text?: string }>
    }
    return { isError: result.isError === true, body: JSON.parse(result.content[0]!.text!) as Record<string, unknown> }
  } finally {
    await client.close()
  }
}

const jobRow = (id: string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<Record<string, unknown>>`SELECT source, input_kind, language, diarize, word_timestamps, task, prompt
      FROM jobs WHERE id = ${id}`.pipe(Effect.orDie)
    return row
  }))

const charges = (id: string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ledger WHERE kind = 'job_charge' AND ref = ${id}`.pipe(
      Effect.orDie
    )
    return rows[0]?.n
  }))

/** Stored media files under the server's data dir. */
const storedFiles = () => {
  const root = path.join(server.storage.dataDir, "media")
  if (!fs.existsSync(root)) return [] as Array<string>
  return (fs.readdirSync(root, { recursive: true }) as Array<string>).filter((entry) => fs.statSync(path.join(root, entry)).isFile())
}

describe("one submission use case behind every path", () => {
  it("builds the same job from no options on every path (defaults in one place) and charges each job once", async () => {
    const { key } = await server.account()
    const multipart = await accepted(await submitFile(server, { key, file: { name: "a.wav", bytes: media } }))
    const link = await accepted(await submitUrl(server, key, { url: `${links.origin}/a.wav` }))
    const direct = await accepted(await directUpload(key, {}))
    const viaOpenAi = await openAi(key, { response_format: "json" })
    expect(viaOpenAi.status, await viaOpenAi.clone().text()).toBe(200)
    const openAiJob = viaOpenAi.headers.get("x-verbatim-job-id")!

    const mcp = await mcpSubmitLink(key, { url: `${links.origin}/a.wav` })
    expect(mcp.isError, JSON.stringify(mcp.body)).toBe(false)

    const ids = { upload: multipart.job_id, url: link.job_id, direct: direct.job_id, api: openAiJob, mcp: String(mcp.body["job_id"]) }
    for (const id of Object.values(ids)) await waitForJob(server, key, id, (job) => job.status === "done")

    // `language` was `auto` (the default); a finished job holds the detected one (the stand-in says en).
    const defaults = { language: "en", diarize: false, word_timestamps: false, task: "transcribe", prompt: null }
    expect(await jobRow(ids.upload)).toEqual({ ...defaults, source: "upload", input_kind: "upload" })
    expect(await jobRow(ids.url)).toEqual({ ...defaults, source: "url", input_kind: "url" })
    expect(await jobRow(ids.direct)).toEqual({ ...defaults, source: "upload", input_kind: "direct" })
    expect(await jobRow(ids.api)).toEqual({ ...defaults, source: "api", input_kind: "upload" })
    expect(await jobRow(ids.mcp)).toEqual({ ...defaults, source: "url", input_kind: "url" })
    for (const id of Object.values(ids)) expect(await charges(id), id).toBe(1)
  })

  it("spells word_timestamps once: the multipart field, the JSON option, the ticket and the OpenAI granularity give the same column", async () => {
    const { key } = await server.account()
    const multipart = await accepted(
      await submitFile(server, { key, file: { name: "a.wav", bytes: media }, fields: { word_timestamps: "true" } })
    )
    const link = await accepted(await submitUrl(server, key, { url: `${links.origin}/a.wav`, word_timestamps: true }))
    const direct = await accepted(await directUpload(key, { word_timestamps: true }))
    const viaOpenAi = await openAi(key, { response_format: "verbose_json", "timestamp_granularities[]": "word" })
    expect(viaOpenAi.status).toBe(200)
    for (const id of [multipart.job_id, link.job_id, direct.job_id, viaOpenAi.headers.get("x-verbatim-job-id")!]) {
      expect((await jobRow(id))?.["word_timestamps"], id).toBe(true)
    }
  })

  it("refuses a language the English-only model cannot take with the same sentence on every path, and keeps nothing", async () => {
    const { key, accountId } = await server.account()
    const before = storedFiles().length
    const multipart = await expectError(
      await submitFile(server, { key, file: { name: "a.wav", bytes: media }, fields: { language: "fr" } }),
      422,
      "VALIDATION_FAILED"
    )
    const link = await expectError(await submitUrl(server, key, { url: `${links.origin}/a.wav`, language: "fr" }), 422, "VALIDATION_FAILED")
    const init = await expectError(
      await postJson(server, "/v1/uploads/init", { filename: "a.wav", size_bytes: media.length, language: "fr" }, key),
      422,
      "VALIDATION_FAILED"
    )
    // A ticket stored under another model: its commit is refused by the same check, at the options.
    const jobId = JobId.make(crypto.randomUUID())
    const objectKey = `uploads/${jobId}/a.wav`
    const options = { language: "fr", diarize: false, word_timestamps: false, source: "upload" }
    await server.run(Effect.gen(function*() {
      const tickets = yield* UploadTickets
      return yield* tickets.create({
        jobId,
        accountId,
        apiKeyId: null,
        objectKey,
        filename: "a.wav",
        sizeBytes: media.length,
        contentType: "audio/wav",
        options
      })
    }))
    const commit = await expectError(
      await postJson(server, `/v1/uploads/${jobId}/commit`, { object_key: objectKey, options }, key),
      422,
      "VALIDATION_FAILED"
    )
    const viaOpenAi = await openAi(key, { language: "fr" })
    const mcp = await mcpSubmitLink(key, { url: `${links.origin}/a.wav`, language: "fr" })
    const openAiBody = await viaOpenAi.json() as { error: { message: string; param: string | null; code: string } }

    expect(multipart["detail"]).toEqual([{ loc: ["body", "language"], msg: multipart["error"] }])
    expect(link["error"]).toBe(multipart["error"])
    expect(init["error"]).toBe(multipart["error"])
    expect(commit["error"]).toBe(multipart["error"])
    expect(commit["detail"]).toEqual([{ loc: ["body", "options", "language"], msg: multipart["error"] }])
    expect(viaOpenAi.status).toBe(400)
    expect(openAiBody.error).toMatchObject({ message: multipart["error"], param: "language", code: "invalid_value" })
    expect(mcp).toEqual({ isError: true, body: { error: multipart["error"], code: "VALIDATION_FAILED" } })

    expect((await listJobs(server, key)).jobs).toEqual([])
    expect(storedFiles().length).toBe(before)
  })

  it("stores upload-ticket options only in TicketOptions' shape and reads them back decoded", async () => {
    const { accountId } = await server.account()
    const create = (options: Record<string, unknown>) => {
      const jobId = JobId.make(crypto.randomUUID())
      return server.run(Effect.gen(function*() {
        const tickets = yield* UploadTickets
        yield* tickets.create({
          jobId,
          accountId,
          apiKeyId: null,
          objectKey: `uploads/${jobId}/a.wav`,
          filename: "a.wav",
          sizeBytes: media.length,
          contentType: "audio/wav",
          options
        })
        return yield* tickets.get(jobId)
      }))
    }
    const stored = await create({ language: "de", diarize: true, min_speakers: 2, word_timestamps: true, source: "api", task: "translate" })
    expect(stored._tag === "Some" ? stored.value.options : undefined).toEqual({
      language: "de",
      diarize: true,
      min_speakers: 2,
      word_timestamps: true,
      source: "api",
      task: "translate"
    })
    // A caller that hands over options a commit could not read back is a defect, refused before the row is written.
    await expect(create({ language: "xx", diarize: false, word_timestamps: false, source: "upload" })).rejects.toThrow()
    await expect(create({ language: "en", diarize: "yes", word_timestamps: false, source: "upload" })).rejects.toThrow()
  })

  it("refuses an empty balance with 402 NO_CREDITS on every path (OpenAI's shape on its route), and keeps nothing", async () => {
    const { key } = await server.account(undefined, { minutes: 0 })
    const before = storedFiles().length
    const fetchedBefore = links.hits.length
    await expectError(await submitFile(server, { key, file: { name: "a.wav", bytes: media } }), 402, "NO_CREDITS")
    await expectError(await submitUrl(server, key, { url: `${links.origin}/a.wav` }), 402, "NO_CREDITS")
    await expectError(await postJson(server, "/v1/uploads/init", { filename: "a.wav", size_bytes: media.length }, key), 402, "NO_CREDITS")
    const viaOpenAi = await openAi(key, {})
    expect(viaOpenAi.status).toBe(402)
    expect((await viaOpenAi.json() as { error: { code: string } }).error.code).toBe("no_credits")

    const mcp = await mcpSubmitLink(key, { url: `${links.origin}/a.wav` })
    expect(mcp).toMatchObject({ isError: true, body: { code: "NO_CREDITS" } })

    expect((await listJobs(server, key)).jobs).toEqual([])
    expect(storedFiles().length).toBe(before)
    // Neither link was fetched: the credit check comes before resolving.
    expect(links.hits.length).toBe(fetchedBefore)
  })
})
