/**
 * Direct upload (spec, Endpoint rule 6) over real sockets: init → PUT the bytes to the
 * ticket's signed `upload_url` with its `method` and `headers` → commit → job done; a
 * second commit is a 200 replay; wrong keys, other accounts, missing or short uploads,
 * tampered and expired signatures, refused extensions and edited options.
 *
 * The server signs with a known `signingSecret`, so the test can forge an upload URL that
 * expired an hour ago exactly as the server would have signed it (HMAC-SHA256, base64url,
 * over `upload:<job_id>:<object_key>:<expires>`). The pipeline is the stand-in.
 */
import { Option, Redacted } from "effect"
import { createHmac } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  expectError,
  expectJobShape,
  postJson,
  request,
  waitForJob
} from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

const signingSecret = "direct-upload-test-secret"
let server: TestServer
let owner: { key: string }
let other: { key: string }
const standIn = makeStandIn({ delayMs: 150, steps: 2 })

beforeAll(async () => {
  server = await startServer(
    "api-direct",
    { rateLimitPerMinute: 10_000, signingSecret: Option.some(Redacted.make(signingSecret)) },
    { pipeline: standIn.layer }
  )
  owner = await server.account()
  other = await server.account()
})
afterAll(async () => {
  await server?.close()
})

interface Ticket {
  readonly job_id: string
  readonly object_key: string
  readonly upload_url: string
  readonly method: string
  readonly headers: Record<string, string>
  readonly expires_in: number
  readonly options: Record<string, unknown>
}

const init = async (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const response = await postJson(server, "/v1/uploads/init", body, key, headers)
  const ticket = await response.json() as Ticket
  expect(response.status, JSON.stringify(ticket)).toBe(200)
  return { ticket, response }
}

const put = (url: string, bytes: Uint8Array, method = "PUT", headers: Record<string, string> = { "Content-Type": "application/octet-stream" }) =>
  fetch(url, { method, headers, body: bytes as Uint8Array<ArrayBuffer> })

const commit = (key: string, jobId: string, body: Record<string, unknown>) =>
  postJson(server, `/v1/uploads/${jobId}/commit`, body, key)

const storedObject = (objectKey: string) => path.join(server.storage.dataDir, "media", objectKey)

describe("direct upload", () => {
  it("init → PUT → commit gives 202 and a job that reaches done; a second commit answers 200 with the same job", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "interview.wav", size_bytes: bytes.length, content_type: "audio/wav", language: "en" })
    expect(ticket.job_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(ticket.object_key).toContain(ticket.job_id)
    expect(ticket.method).toBe("PUT")
    expect(ticket.expires_in).toBeGreaterThan(60)
    expect(ticket.upload_url.startsWith(`${server.url}/v1/uploads/${ticket.job_id}/bytes?`)).toBe(true)
    // The URL carries its own authorisation, never the caller's key.
    expect(ticket.upload_url).not.toContain(owner.key)
    expect(ticket.options).toEqual({ language: "en", diarize: false, word_timestamps: false, source: "upload" })

    const uploaded = await put(ticket.upload_url, bytes, ticket.method, ticket.headers)
    expect(uploaded.status).toBe(200)
    expect(await uploaded.json()).toEqual({ object_key: ticket.object_key, received_bytes: bytes.length })
    expect(fs.statSync(storedObject(ticket.object_key)).size).toBe(bytes.length)

    const committed = await commit(owner.key, ticket.job_id, { object_key: ticket.object_key, options: ticket.options })
    const answer = await committed.json() as { job_id: string; status: string }
    expect(committed.status, JSON.stringify(answer)).toBe(202)
    expect(answer).toEqual({ job_id: ticket.job_id, status: "queued" })

    const done = await waitForJob(server, owner.key, ticket.job_id)
    expectJobShape(done)
    expect(done).toMatchObject({ status: "done", filename: "interview.wav", source: "upload", language: "en" })

    const again = await commit(owner.key, ticket.job_id, { object_key: ticket.object_key, options: ticket.options })
    expect(again.status).toBe(200)
    expect(again.headers.get("x-idempotent-replay")).toBe("true")
    expect(await again.json()).toEqual({ job_id: ticket.job_id, status: "done" })

    // The URL is spent once committed.
    await expectError(await put(ticket.upload_url, bytes), 410, "UPLOAD_EXPIRED")
  })

  it("uses original_filename as the job's display name and keeps the options echoed in any key order", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "raw.wav", size_bytes: bytes.length, diarize: true })
    expect((await put(ticket.upload_url, bytes)).status).toBe(200)
    const reordered = Object.fromEntries(Object.entries(ticket.options).reverse())
    const committed = await commit(owner.key, ticket.job_id, {
      object_key: ticket.object_key,
      options: reordered,
      original_filename: "Board meeting.wav"
    })
    expect(committed.status).toBe(202)
    const done = await waitForJob(server, owner.key, ticket.job_id)
    expect(done.filename).toBe("Board meeting.wav")
  })

  it("replays init with the same Idempotency-Key: the same ticket, 200 and X-Idempotent-Replay", async () => {
    const body = { filename: "same.wav", size_bytes: 100 }
    const first = await init(owner.key, body, { "Idempotency-Key": "init-once-1" })
    const second = await init(owner.key, body, { "Idempotency-Key": "init-once-1" })
    expect(second.response.headers.get("x-idempotent-replay")).toBe("true")
    expect(second.ticket.job_id).toBe(first.ticket.job_id)
    expect(second.ticket.object_key).toBe(first.ticket.object_key)
    await expectError(await postJson(server, "/v1/uploads/init", body, owner.key, { "Idempotency-Key": "bad key" }), 400, "BAD_IDEMPOTENCY_KEY")
  })
  it("makes one job of 10 simultaneous commits of one upload: one 202, the rest 200 replays", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "race.wav", size_bytes: bytes.length })
    expect((await put(ticket.upload_url, bytes, ticket.method, ticket.headers)).status).toBe(200)
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        commit(owner.key, ticket.job_id, { object_key: ticket.object_key, options: ticket.options }).then(async (response) => ({
          status: response.status,
          body: await response.json() as { job_id: string }
        })))
    )
    expect(answers.filter((answer) => answer.status === 202), JSON.stringify(answers)).toHaveLength(1)
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(9)
    expect(new Set(answers.map((answer) => answer.body.job_id))).toEqual(new Set([ticket.job_id]))
    await waitForJob(server, owner.key, ticket.job_id)
    expect(standIn.runs.get(ticket.job_id)).toEqual(["started", "done"])
  })

  it("accepts the bytes under any declared content type, as the upload endpoint documents", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "typed.wav", size_bytes: bytes.length, content_type: "audio/wav" })
    const uploaded = await put(ticket.upload_url, bytes, "PUT", { "Content-Type": "audio/wav" })
    expect(uploaded.status, await uploaded.clone().text()).toBe(200)
    expect(await uploaded.json()).toEqual({ object_key: ticket.object_key, received_bytes: bytes.length })
  })
})

describe("direct upload refusals", () => {
  it("refuses a commit with another object_key with 403 KEY_MISMATCH", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "a.wav", size_bytes: bytes.length })
    expect((await put(ticket.upload_url, bytes)).status).toBe(200)
    await expectError(
      await commit(owner.key, ticket.job_id, { object_key: ticket.object_key.replace(/\.wav$/, ".mp3"), options: ticket.options }),
      403,
      "KEY_MISMATCH"
    )
    // Another ticket's key, on this job.
    const { ticket: second } = await init(owner.key, { filename: "b.wav", size_bytes: bytes.length })
    await expectError(
      await commit(owner.key, ticket.job_id, { object_key: second.object_key, options: ticket.options }),
      403,
      "KEY_MISMATCH"
    )
  })

  it("refuses another account's commit with 403 KEY_MISMATCH, and that account never sees the job", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "mine.wav", size_bytes: bytes.length })
    expect((await put(ticket.upload_url, bytes)).status).toBe(200)
    await expectError(
      await commit(other.key, ticket.job_id, { object_key: ticket.object_key, options: ticket.options }),
      403,
      "KEY_MISMATCH"
    )
    await expectError(await request(server, "GET", `/v1/jobs/${ticket.job_id}`, other.key), 404, "NOT_FOUND")
    // The rightful owner still can.
    expect((await commit(owner.key, ticket.job_id, { object_key: ticket.object_key, options: ticket.options })).status).toBe(202)
    await waitForJob(server, owner.key, ticket.job_id)
  })

  it("refuses a commit before any bytes with 400 UPLOAD_MISSING", async () => {
    const { ticket } = await init(owner.key, { filename: "later.wav", size_bytes: 1234 })
    const body = await expectError(
      await commit(owner.key, ticket.job_id, { object_key: ticket.object_key, options: ticket.options }),
      400,
      "UPLOAD_MISSING"
    )
    expect(body).toMatchObject({ expected_bytes: 1234, received_bytes: null })
    await expectError(await request(server, "GET", `/v1/jobs/${ticket.job_id}`, owner.key), 404, "NOT_FOUND")
  })

  it("refuses bytes that do not match size_bytes with 400 SIZE_MISMATCH and keeps none of them", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "short.wav", size_bytes: bytes.length + 10 })
    const short = await expectError(await put(ticket.upload_url, bytes), 400, "SIZE_MISMATCH")
    expect(short).toMatchObject({ expected_bytes: bytes.length + 10, received_bytes: bytes.length })
    expect(fs.existsSync(storedObject(ticket.object_key))).toBe(false)

    const { ticket: small } = await init(owner.key, { filename: "long.wav", size_bytes: 100 })
    const long = await expectError(await put(small.upload_url, bytes), 400, "SIZE_MISMATCH")
    expect(long).toMatchObject({ expected_bytes: 100, received_bytes: null })
    expect(fs.existsSync(storedObject(small.object_key))).toBe(false)
    await expectError(
      await commit(owner.key, small.job_id, { object_key: small.object_key, options: small.options }),
      400,
      "UPLOAD_MISSING"
    )
  })

  it("refuses a tampered signature with 403", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "t.wav", size_bytes: bytes.length })
    const url = new URL(ticket.upload_url)
    const signature = url.searchParams.get("signature")!
    url.searchParams.set("signature", (signature[0] === "A" ? "B" : "A") + signature.slice(1))
    await expectError(await put(url.href, bytes), 403, "KEY_MISMATCH")
    // A later expiry under the old signature is a tampering too.
    const extended = new URL(ticket.upload_url)
    extended.searchParams.set("expires", String(Number(extended.searchParams.get("expires")) + 86_400))
    await expectError(await put(extended.href, bytes), 403, "KEY_MISMATCH")
    expect(fs.existsSync(storedObject(ticket.object_key))).toBe(false)
  })

  it("refuses an upload URL past its expiry with 410 UPLOAD_EXPIRED", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "old.wav", size_bytes: bytes.length })
    const expires = Math.floor(Date.now() / 1000) - 3600
    const signature = createHmac("sha256", signingSecret)
      .update(`upload:${ticket.job_id}:${ticket.object_key}:${expires}`)
      .digest("base64url")
    // The forged URL is otherwise the server's own: the current one still works.
    expect(new URL(ticket.upload_url).searchParams.get("signature")).toBe(
      createHmac("sha256", signingSecret)
        .update(`upload:${ticket.job_id}:${ticket.object_key}:${new URL(ticket.upload_url).searchParams.get("expires")}`)
        .digest("base64url")
    )
    const expired = `${server.url}/v1/uploads/${ticket.job_id}/bytes?expires=${expires}&signature=${signature}`
    await expectError(await put(expired, bytes), 410, "UPLOAD_EXPIRED")
    expect(fs.existsSync(storedObject(ticket.object_key))).toBe(false)
  })

  it("refuses a file name with a refused extension at init with 415 BAD_EXT, and a text type with BAD_MIME", async () => {
    await expectError(await postJson(server, "/v1/uploads/init", { filename: "notes.txt", size_bytes: 10 }, owner.key), 415, "BAD_EXT")
    await expectError(
      await postJson(server, "/v1/uploads/init", { filename: "a.mp3", size_bytes: 10, content_type: "text/plain" }, owner.key),
      415,
      "BAD_MIME"
    )
  })

  it("refuses init over 5 GB with 413 FILE_TOO_LARGE, bad fields with 422, and keyless callers with 401", async () => {
    await expectError(
      await postJson(server, "/v1/uploads/init", { filename: "huge.wav", size_bytes: 5 * 1000 ** 3 + 1 }, owner.key),
      413,
      "FILE_TOO_LARGE"
    )
    await expectError(await postJson(server, "/v1/uploads/init", { filename: "a.wav", size_bytes: 0 }, owner.key), 422, "VALIDATION_FAILED")
    await expectError(
      await postJson(server, "/v1/uploads/init", { filename: "a.wav", size_bytes: 10, source: "tape" }, owner.key),
      422,
      "BAD_SOURCE"
    )
    await expectError(await postJson(server, "/v1/uploads/init", { filename: "a.wav", size_bytes: 10 }), 401, "MISSING_API_KEY")
  })

  it("refuses options changed on commit with 422", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "opts.wav", size_bytes: bytes.length })
    expect((await put(ticket.upload_url, bytes)).status).toBe(200)
    const body = await expectError(
      await commit(owner.key, ticket.job_id, { object_key: ticket.object_key, options: { ...ticket.options, language: "de" } }),
      422,
      "VALIDATION_FAILED"
    )
    expect(body["detail"]).toEqual([expect.objectContaining({ loc: ["body", "options"] })])
    await expectError(await request(server, "GET", `/v1/jobs/${ticket.job_id}`, owner.key), 404, "NOT_FOUND")
  })

  it("answers a commit for an unknown ticket with 404 and a non-UUID id with 400 BAD_ID", async () => {
    await expectError(
      await commit(owner.key, crypto.randomUUID(), { object_key: "uploads/x/original.wav", options: {} }),
      404,
      "NOT_FOUND"
    )
    await expectError(await commit(owner.key, "not-a-uuid", { object_key: "x", options: {} }), 400, "BAD_ID")
  })
})

describe("a finished upload is immutable", () => {
  it("answers a second PUT to a finished upload with 409 UPLOAD_COMPLETE, keeps the bytes, and the commit still works", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "kept.wav", size_bytes: bytes.length })
    expect((await put(ticket.upload_url, bytes)).status).toBe(200)
    await expectError(await put(ticket.upload_url, bytes.subarray(0, 5)), 409, "UPLOAD_COMPLETE")
    await expectError(await put(ticket.upload_url, bytes), 409, "UPLOAD_COMPLETE")
    expect(Buffer.compare(fs.readFileSync(storedObject(ticket.object_key)), bytes)).toBe(0)
    expect((await commit(owner.key, ticket.job_id, { object_key: ticket.object_key, options: ticket.options })).status).toBe(202)
    expect((await waitForJob(server, owner.key, ticket.job_id)).status).toBe("done")
  })

  it("takes the bytes once from simultaneous PUTs: one 200, the others 409, the stored object whole", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "raced.wav", size_bytes: bytes.length })
    const statuses = await Promise.all(Array.from({ length: 6 }, () => put(ticket.upload_url, bytes).then((r) => r.status)))
    expect(statuses.filter((status) => status === 200), JSON.stringify(statuses)).toHaveLength(1)
    expect(statuses.filter((status) => status === 409)).toHaveLength(5)
    expect(Buffer.compare(fs.readFileSync(storedObject(ticket.object_key)), bytes)).toBe(0)
    // No write temporaries are left beside the object.
    expect(fs.readdirSync(path.dirname(storedObject(ticket.object_key)))).toEqual([path.basename(ticket.object_key)])
  })

  it("answers a commit whose stored object is gone with 400 UPLOAD_MISSING, then takes the bytes again", async () => {
    const bytes = tinyWav()
    const { ticket } = await init(owner.key, { filename: "lost.wav", size_bytes: bytes.length })
    expect((await put(ticket.upload_url, bytes)).status).toBe(200)
    fs.rmSync(storedObject(ticket.object_key))
    const body = await expectError(
      await commit(owner.key, ticket.job_id, { object_key: ticket.object_key, options: ticket.options }),
      400,
      "UPLOAD_MISSING"
    )
    expect(body).toMatchObject({ expected_bytes: bytes.length, received_bytes: null })
    await expectError(await request(server, "GET", `/v1/jobs/${ticket.job_id}`, owner.key), 404, "NOT_FOUND")
    expect((await put(ticket.upload_url, bytes)).status).toBe(200)
    expect((await commit(owner.key, ticket.job_id, { object_key: ticket.object_key, options: ticket.options })).status).toBe(202)
    await waitForJob(server, owner.key, ticket.job_id)
  })
})
