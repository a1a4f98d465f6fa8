/**
 * `POST /v1/transcribe` (multipart) over real sockets: the accepted path to a finished job,
 * and every refusal — extension, MIME type, `source`, `language`, missing file, a recording
 * over 10 hours (probed by the real decoder), a body declared over 5 GB (refused before it
 * is read), broken multipart framing — none of which may create a job or leave a file.
 * The speech pipeline is the stand-in (test/support/standInPipeline.ts).
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  accepted,
  eventually,
  expectError,
  expectJobShape,
  getJob,
  listJobs,
  postJson,
  rawRequest,
  request,
  submitFile,
  submitUrl,
  waitForJob
} from "../support/jobsClient.ts"
import { Effect } from "effect"
import { UploadTickets } from "../../services/uploads/UploadTickets.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import { mediaDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, standInText, tinyWav } from "../support/standInPipeline.ts"

let server: TestServer
let key: string
const standIn = makeStandIn({ delayMs: 200, steps: 2 })

beforeAll(async () => {
  server = await startServer("api-submit", { rateLimitPerMinute: 10_000 }, { pipeline: standIn.layer })
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
})

/** Stored media files under the server's data dir (refusals must leave none behind). */
const storedFiles = () => {
  const root = path.join(server.storage.dataDir, "media")
  if (!fs.existsSync(root)) return [] as Array<string>
  return (fs.readdirSync(root, { recursive: true }) as Array<string>)
    .filter((entry) => fs.statSync(path.join(root, entry)).isFile())
}

/** A real FLAC whose STREAMINFO claims 11 hours of samples: the container says > 10 h. */
const elevenHourFlac = () => {
  const bytes = Buffer.from(fs.readFileSync(path.join(mediaDir, "f04_library.flac")))
  expect(bytes.toString("latin1", 0, 4)).toBe("fLaC")
  const sampleRate = (bytes[18]! << 12) | (bytes[19]! << 4) | (bytes[20]! >> 4)
  const total = 11 * 3600 * sampleRate
  // total_samples: 36 bits, the low nibble of STREAMINFO byte 13 then bytes 14..17.
  bytes[21] = (bytes[21]! & 0xf0) | (Math.floor(total / 2 ** 32) & 0xf)
  bytes.writeUInt32BE(total >>> 0, 22)
  return new Uint8Array(bytes)
}

describe("POST /v1/transcribe", () => {
  it("accepts a file with 202 {job_id, status: queued}, and the job reaches done", async () => {
    const response = await submitFile(server, {
      key,
      file: { name: "meeting notes.wav", bytes: tinyWav() },
      fields: { language: "en", diarize: "false", word_timestamps: "true" }
    })
    expect(response.headers.get("x-idempotent-replay")).toBeNull()
    const answer = await accepted(response)
    expect(Object.keys(answer).sort()).toEqual(["job_id", "status"])

    const done = await waitForJob(server, key, answer.job_id)
    expectJobShape(done)
    expect(done).toMatchObject({
      job_id: answer.job_id,
      status: "done",
      progress: 100,
      queue_position: 0,
      filename: "meeting notes.wav",
      source: "upload",
      language: "en",
      speech_detected: true,
      error: null,
      locked: false
    })
    expect(done.audio_duration_seconds).toBeCloseTo(0.5, 3)
    expect(standIn.runs.get(answer.job_id)).toEqual(["started", "done"])

    const result = await request(server, "GET", `/v1/jobs/${answer.job_id}/result`, key)
    expect(result.status).toBe(200)
    expect(result.headers.get("content-type")).toMatch(/application\/json/)
    expect(await result.json()).toMatchObject({ text: standInText, speech_detected: true })
  })

  it("takes `auto` on the English-only model", async () => {
    const answer = await accepted(await submitFile(server, {
      key,
      file: { name: "auto.wav", bytes: tinyWav() },
      fields: { language: "auto" }
    }))
    expect(await waitForJob(server, key, answer.job_id)).toMatchObject({ status: "done", language: "en" })
  })

  it("takes the `source` field and leaves it `upload` by default", async () => {
    const answer = await accepted(await submitFile(server, {
      key,
      file: { name: "call.wav", bytes: tinyWav() },
      fields: { source: "recording" }
    }))
    expect((await getJob(server, key, answer.job_id)).source).toBe("recording")
  })

  it("ends a file without audio as failed NO_AUDIO, retryable false", async () => {
    const answer = await accepted(await submitFile(server, {
      key,
      file: { name: "clip.wav", bytes: tinyWav({ fail: "noaudio", delayMs: 50 }) }
    }))
    const failed = await waitForJob(server, key, answer.job_id)
    expectJobShape(failed)
    expect(failed).toMatchObject({ status: "failed", error_code: "NO_AUDIO", retryable: false })
    expect(failed.error).toMatch(/no usable audio/)
    await expectError(await request(server, "GET", `/v1/jobs/${answer.job_id}/result`, key), 409, "NOT_READY")
  })
})

describe("POST /v1/transcribe refusals create no job and keep no file", () => {
  let totalBefore: number
  let filesBefore: Array<string>

  beforeAll(async () => {
    // Let the accepted jobs above settle so the listing does not move under us.
    for (const job of (await listJobs(server, key, "?limit=100")).jobs) await waitForJob(server, key, job.job_id)
    totalBefore = (await listJobs(server, key)).total!
    filesBefore = storedFiles()
  })

  it("refuses a .txt file with 415 BAD_EXT", async () => {
    await expectError(
      await submitFile(server, { key, file: { name: "notes.txt", bytes: tinyWav(), type: "audio/wav" } }),
      415,
      "BAD_EXT"
    )
    await expectError(
      await submitFile(server, { key, file: { name: "no-extension", bytes: tinyWav() } }),
      415,
      "BAD_EXT"
    )
  })

  it("refuses text/plain named .mp3 with 415 BAD_MIME", async () => {
    await expectError(
      await submitFile(server, { key, file: { name: "song.mp3", bytes: tinyWav(), type: "text/plain" } }),
      415,
      "BAD_MIME"
    )
  })

  it("refuses an unknown source with 422 BAD_SOURCE and a detail list", async () => {
    const body = await expectError(
      await submitFile(server, { key, file: { name: "a.wav", bytes: tinyWav() }, fields: { source: "podcast" } }),
      422,
      "BAD_SOURCE"
    )
    expect(body["detail"]).toEqual(expect.arrayContaining([
      expect.objectContaining({ loc: ["body", "source"], msg: expect.any(String) })
    ]))
  })

  it("refuses language \"english\" with 422 naming the field", async () => {
    const body = await expectError(
      await submitFile(server, { key, file: { name: "a.wav", bytes: tinyWav() }, fields: { language: "english" } }),
      422,
      "VALIDATION_FAILED"
    )
    expect(body["detail"]).toEqual([expect.objectContaining({ loc: ["body", "language"] })])
  })

  it("refuses a code Whisper does not know (zz) with 422 naming the field and saying where the codes are", async () => {
    const body = await expectError(
      await submitFile(server, { key, file: { name: "a.wav", bytes: tinyWav() }, fields: { language: "zz" } }),
      422,
      "VALIDATION_FAILED"
    )
    expect(body["detail"]).toEqual([{ loc: ["body", "language"], msg: expect.stringContaining("/openapi.json") }])
  })

  // The test server runs whisper-tiny.en (test/support/server.ts): English only.
  it("refuses a language the English-only model cannot transcribe (fr) on every submit path, keyless too", async () => {
    const englishOnly = (body: Record<string, unknown>, loc: ReadonlyArray<string> = ["body", "language"]) => {
      expect(body["error"]).toMatch(/whisper-tiny\.en is English-only: language must be `en` or `auto`/)
      expect(body["detail"]).toEqual([{ loc, msg: body["error"] }])
    }
    englishOnly(await expectError(
      await submitFile(server, { key, file: { name: "a.wav", bytes: tinyWav() }, fields: { language: "fr" } }),
      422,
      "VALIDATION_FAILED"
    ))
    englishOnly(await expectError(
      await submitFile(server, { file: { name: "a.wav", bytes: tinyWav() }, fields: { language: "de" } }),
      422,
      "VALIDATION_FAILED"
    ))
    englishOnly(await expectError(
      await submitUrl(server, key, { url: "https://example.com/episode.mp3", language: "fr" }),
      422,
      "VALIDATION_FAILED"
    ))
    englishOnly(await expectError(
      await postJson(server, "/v1/uploads/init", { filename: "a.wav", size_bytes: 100, language: "es" }, key),
      422,
      "VALIDATION_FAILED"
    ))
  })

  it("refuses a commit whose ticket asks for a language the model no longer takes (ticket made under another model)", async () => {
    const owner = await server.account()
    const jobId = JobId.make(crypto.randomUUID())
    const options = { language: "fr", diarize: false, word_timestamps: false, source: "upload" }
    // What uploads/init stored on a server running whisper-base; this server runs whisper-tiny.en.
    await server.run(Effect.gen(function*() {
      return yield* (yield* UploadTickets).create({
        jobId,
        accountId: owner.accountId,
        apiKeyId: null,
        objectKey: `uploads/${jobId}/a.wav`,
        filename: "a.wav",
        sizeBytes: 100,
        contentType: "audio/wav",
        options
      })
    }))
    const body = await expectError(
      await postJson(server, `/v1/uploads/${jobId}/commit`, { object_key: `uploads/${jobId}/a.wav`, options }, owner.key),
      422,
      "VALIDATION_FAILED"
    )
    expect(body["detail"]).toEqual([{ loc: ["body", "options", "language"], msg: expect.stringContaining("English-only") }])
  })

  it("refuses a non-boolean diarize with 422", async () => {
    const body = await expectError(
      await submitFile(server, { key, file: { name: "a.wav", bytes: tinyWav() }, fields: { diarize: "maybe" } }),
      422,
      "VALIDATION_FAILED"
    )
    expect(body["detail"]).toEqual([expect.objectContaining({ loc: ["body", "diarize"] })])
  })

  it("refuses a request without a file with 422 and detail loc [body, file]", async () => {
    const body = await expectError(await submitFile(server, { key, fields: { language: "en" } }), 422, "VALIDATION_FAILED")
    expect(body["detail"]).toEqual([expect.objectContaining({ loc: ["body", "file"] })])
    const misnamed = await expectError(
      await submitFile(server, { key, file: { name: "a.wav", bytes: tinyWav(), field: "audio" } }),
      422,
      "VALIDATION_FAILED"
    )
    expect(misnamed["detail"]).toEqual([expect.objectContaining({ loc: ["body", "audio"] })])
  })

  it("refuses two files in one request, and more parts than allowed, with 422", async () => {
    const form = new FormData()
    form.append("file", new Blob([tinyWav() as Uint8Array<ArrayBuffer>], { type: "audio/wav" }), "one.wav")
    form.append("file", new Blob([tinyWav() as Uint8Array<ArrayBuffer>], { type: "audio/wav" }), "two.wav")
    const two = await fetch(`${server.url}/v1/transcribe`, { method: "POST", headers: { "X-API-Key": key }, body: form })
    const body = await expectError(two, 422, "VALIDATION_FAILED")
    expect(body["detail"]).toEqual([expect.objectContaining({ loc: ["body", "file"] })])

    const crowded = new FormData()
    for (let i = 0; i < 20; i++) crowded.append(`note${i}`, "x")
    crowded.append("file", new Blob([tinyWav() as Uint8Array<ArrayBuffer>], { type: "audio/wav" }), "a.wav")
    const many = await fetch(`${server.url}/v1/transcribe`, { method: "POST", headers: { "X-API-Key": key }, body: crowded })
    expect(many.status).toBe(422)
  })

  it("refuses a recording whose container says 11 hours with 413 FILE_TOO_LONG", async () => {
    const body = await expectError(
      await submitFile(server, { key, file: { name: "marathon.flac", bytes: elevenHourFlac(), type: "audio/flac" } }),
      413,
      "FILE_TOO_LONG"
    )
    expect(body["error"]).toMatch(/11\.0 hours/)
  })

  it("refuses a body declared over 5 GB with 413 FILE_TOO_LARGE before reading it", async () => {
    const url = new URL(server.url)
    const answer = await rawRequest(
      server.url,
      "POST /v1/transcribe HTTP/1.1\r\n" +
        `Host: ${url.host}\r\n` +
        `X-API-Key: ${key}\r\n` +
        "Content-Type: multipart/form-data; boundary=vbboundary\r\n" +
        `Content-Length: ${5 * 1000 ** 3 + 50 * 1024 * 1024}\r\n\r\n`,
      // Only the opening of the body: the server must answer without waiting for the rest.
      "--vbboundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.wav\"\r\n" +
        "Content-Type: audio/wav\r\n\r\n"
    )
    expect(answer.status).toBe(413)
    const body = JSON.parse(answer.body) as { code: string; error: string }
    expect(body.code).toBe("FILE_TOO_LARGE")
    expect(body.error).toMatch(/5 GB/)
  })

  it("answers broken multipart framing with a 4xx error body, not a 500", async () => {
    const url = new URL(server.url)
    const body = "this is not multipart at all\r\n"
    const answer = await rawRequest(
      server.url,
      "POST /v1/transcribe HTTP/1.1\r\n" +
        `Host: ${url.host}\r\n` +
        `X-API-Key: ${key}\r\n` +
        "Connection: close\r\n" +
        "Content-Type: multipart/form-data; boundary=vbboundary\r\n" +
        `Content-Length: ${body.length}\r\n\r\n`,
      body
    )
    expect(answer.status, answer.body).toBeGreaterThanOrEqual(400)
    expect(answer.status, answer.body).toBeLessThan(500)
    const parsed = JSON.parse(answer.body) as { code: string; error: string }
    expect(typeof parsed.code).toBe("string")
    expect(parsed.error.length).toBeGreaterThan(10)

    // A part that starts but never ends.
    const truncated = "--vbboundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n" +
      "Content-Type: audio/wav\r\n\r\nRIFF...."
    const cut = await rawRequest(
      server.url,
      "POST /v1/transcribe HTTP/1.1\r\n" +
        `Host: ${url.host}\r\n` +
        `X-API-Key: ${key}\r\n` +
        "Connection: close\r\n" +
        "Content-Type: multipart/form-data; boundary=vbboundary\r\n" +
        `Content-Length: ${truncated.length}\r\n\r\n`,
      truncated
    )
    expect(cut.status, cut.body).toBeGreaterThanOrEqual(400)
    expect(cut.status, cut.body).toBeLessThan(500)
  })

  it("keeps nothing of an upload whose client disconnects halfway", async () => {
    const url = new URL(server.url)
    const boundary = "vbcut"
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.wav"\r\n` +
      "Content-Type: audio/wav\r\n\r\n"
    const declared = head.length + 20 * 1024 * 1024 + 64
    const socket = net.connect(Number(url.port), url.hostname)
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
    socket.write(
      "POST /v1/transcribe HTTP/1.1\r\n" +
        `Host: ${url.host}\r\nX-API-Key: ${key}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${declared}\r\n\r\n` + head
    )
    socket.write(Buffer.from(tinyWav(undefined, 0.1)))
    for (let i = 0; i < 8; i++) socket.write(Buffer.alloc(1024 * 1024))
    // Some of it reached storage.
    await eventually(async () => (storedFiles().length > filesBefore.length ? true : undefined), "the partial upload to be stored", 5_000, 20)
    socket.destroy()
    await eventually(
      async () => (storedFiles().length === filesBefore.length ? true : undefined),
      "the partial upload to be removed",
      5_000,
      50
    )
  })

  it("created no job and left no stored file for any refusal above", async () => {
    expect((await listJobs(server, key)).total).toBe(totalBefore)
    expect(storedFiles().sort()).toEqual(filesBefore.sort())
  })
})
