/**
 * The typed client (`verbatim/client`) against the real server over a real socket:
 * submit → done → result through the Effect API and through the Promise wrapper (a file
 * path, streamed), the direct-upload flow, keyless samples with their claim token,
 * polling no faster than every 3 seconds, and error answers decoded into the contract's
 * classes. The stand-in pipeline keeps runs short; recognition is not what is tested.
 */
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  createClient,
  makeClient,
  minimumPollSeconds,
  NotFound,
  submitFile,
  uploadDirect,
  type VerbatimClient,
  waitForJob
} from "verbatim/client"
import { freePort } from "../support/ports.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, standInText, tinyWav } from "../support/standInPipeline.ts"

let server: TestServer
let key: string
let scratch: string

beforeAll(async () => {
  server = await startServer("typed-client", { rateLimitPerMinute: 10_000 }, { pipeline: makeStandIn({ delayMs: 50, steps: 1 }).layer })
  key = (await server.account()).key
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-client-"))
})
afterAll(async () => {
  await server?.close()
  if (scratch !== undefined) fs.rmSync(scratch, { recursive: true, force: true })
})

const withClient = <A, E>(apiKey: string | undefined, f: (client: VerbatimClient) => Effect.Effect<A, E>) =>
  Effect.runPromise(makeClient({ baseUrl: server.url, apiKey }).pipe(Effect.flatMap(f), Effect.provide(FetchHttpClient.layer)))

describe("typed client (Effect API)", () => {
  it("submits bytes, waits at the 3-second floor until done, and reads the transcript", async () => {
    const started = Date.now()
    const { answer, job, transcript } = await withClient(key, (client) =>
      Effect.gen(function*() {
        const answer = yield* submitFile(client, { bytes: tinyWav({ delayMs: 600, steps: 2 }), filename: "meeting.wav" }, {
          options: { language: "en" }
        })
        const job = yield* waitForJob(client, answer.job_id, { intervalSeconds: 0.1, timeoutSeconds: 30 })
        const transcript = yield* client.api.jobs.result({ params: { job_id: answer.job_id }, query: {}, headers: {} })
        return { answer, job, transcript }
      }))
    expect(answer.status).toBe("queued")
    expect(job).toMatchObject({ job_id: answer.job_id, status: "done", filename: "meeting.wav", language: "en" })
    // The job was still running at the first poll, so the second came no sooner than 3 s later.
    expect(Date.now() - started).toBeGreaterThanOrEqual(minimumPollSeconds * 1000)
    expect(transcript).toMatchObject({ text: standInText, segments: [expect.objectContaining({ text: standInText })] })
  })

  it("runs the direct-upload flow: init, PUT to the signed URL, commit", async () => {
    const { committed, job } = await withClient(key, (client) =>
      Effect.gen(function*() {
        const committed = yield* uploadDirect(client, { bytes: tinyWav(), filename: "direct.wav", contentType: "audio/wav" })
        const job = yield* waitForJob(client, committed.job_id, { timeoutSeconds: 30 })
        return { committed, job }
      }))
    expect(committed.status).toBe("queued")
    expect(job).toMatchObject({ status: "done", filename: "direct.wav" })
  })

  it("decodes error answers into the contract's classes", async () => {
    const error = await withClient(key, (client) =>
      Effect.flip(client.api.jobs.get({ params: { job_id: crypto.randomUUID() }, headers: {} })))
    expect(error).toBeInstanceOf(NotFound)
    expect(error).toMatchObject({ _tag: "NotFound", code: "NOT_FOUND", error: expect.any(String) })

    const refused = await withClient(key, (client) =>
      Effect.flip(submitFile(client, { bytes: tinyWav(), filename: "notes.txt" })))
    expect(refused).toMatchObject({ _tag: "UnsupportedMedia", code: "BAD_EXT" })

    const missingKey = await withClient(undefined, (client) => Effect.flip(client.api.jobList.list({ query: {} })))
    expect(missingKey).toMatchObject({ _tag: "MissingApiKey", code: "MISSING_API_KEY" })
  })

  it("follows a keyless sample with its claim token", async () => {
    const job = await withClient(undefined, (client) =>
      Effect.gen(function*() {
        const answer = yield* submitFile(client, { bytes: tinyWav(), filename: "sample.wav" })
        expect(answer.claim_token).toEqual(expect.any(String))
        return yield* waitForJob(client, answer.job_id, { claimToken: answer.claim_token, timeoutSeconds: 30 })
      }))
    expect(job).toMatchObject({ status: "done", preview: true })
  })
})

describe("typed client (Promise wrapper)", () => {
  it("submits a file from disk, waits, and fetches json and srt results", async () => {
    const file = path.join(scratch, "interview.wav")
    fs.writeFileSync(file, tinyWav())
    const verbatim = createClient({ baseUrl: server.url, apiKey: key })
    const answer = await verbatim.submitFile({ path: file, contentType: "audio/wav" }, { idempotencyKey: "client-disk-1" })
    const replay = await verbatim.submitFile({ path: file, contentType: "audio/wav" }, { idempotencyKey: "client-disk-1" })
    expect(replay.job_id).toBe(answer.job_id)
    const job = await verbatim.waitForJob(answer.job_id, { timeoutSeconds: 30 })
    expect(job).toMatchObject({ status: "done", filename: "interview.wav" })
    expect(await verbatim.result(answer.job_id)).toMatchObject({ text: standInText })
    expect(await verbatim.result(answer.job_id, "srt")).toMatch(/^1\r?\n00:00:00,000 --> /)
    await expect(verbatim.getJob(crypto.randomUUID())).rejects.toMatchObject({ code: "NOT_FOUND" })
  })
})

describe("polling (waitForJob)", () => {
  /**
   * A scripted job endpoint on a real socket: it answers a 429 with `retry_after: 4`, then the
   * job while processing (with an ETag), then 304 to that ETag, then the finished job. The
   * client must wait out the 429 (longer than the 3-second floor), poll no faster than every
   * 3 seconds, and send the ETag back as If-None-Match.
   */
  it("waits Retry-After on 429, keeps the 3-second floor, and uses If-None-Match", async () => {
    const jobId = crypto.randomUUID()
    const job = (status: "processing" | "done") => ({
      job_id: jobId, status, progress: status === "done" ? 100 : 50, queue_position: 0, filename: "a.wav",
      audio_duration_seconds: 1, language: "en", source: "upload", speech_detected: status === "done", speech_ratio: 0.5,
      locked: false, diarization: null, created_at: Math.floor(Date.now() / 1000), completed_at: status === "done" ? Math.floor(Date.now() / 1000) : null,
      error: null
    })
    const seen: Array<{ at: number; ifNoneMatch: string | undefined }> = []
    const script = [
      { status: 429, headers: { "retry-after": "4" }, body: { error: "Too many requests, slow down.", code: "RATE_LIMITED", retry_after: 4 } },
      { status: 200, headers: { etag: "\"v1\"" }, body: job("processing") },
      { status: 304, headers: { etag: "\"v1\"" }, body: undefined },
      { status: 200, headers: { etag: "\"v2\"" }, body: job("done") }
    ]
    const scripted = http.createServer((request, response) => {
      seen.push({ at: Date.now(), ifNoneMatch: request.headers["if-none-match"] })
      const step = script[Math.min(seen.length - 1, script.length - 1)]!
      response.writeHead(step.status, { ...step.headers, ...(step.body === undefined ? {} : { "content-type": "application/json" }) })
      response.end(step.body === undefined ? undefined : JSON.stringify(step.body))
    })
    const port = await freePort()
    await new Promise<void>((resolve) => scripted.listen(port, "127.0.0.1", resolve))
    try {
      const verbatim = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "vb_test" })
      const done = await verbatim.waitForJob(jobId, { intervalSeconds: 1, timeoutSeconds: 30 })
      expect(done.status).toBe("done")
      expect(seen.length).toBe(4)
      const gaps = seen.slice(1).map((request, i) => request.at - seen[i]!.at)
      expect(gaps[0]).toBeGreaterThanOrEqual(4_000 - 50)
      for (const gap of gaps.slice(1)) expect(gap).toBeGreaterThanOrEqual(minimumPollSeconds * 1000 - 50)
      expect(seen.map((request) => request.ifNoneMatch)).toEqual([undefined, undefined, "\"v1\"", "\"v1\""])
    } finally {
      await new Promise((resolve) => scripted.close(resolve))
    }
  }, 30_000)
})
