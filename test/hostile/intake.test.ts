/**
 * Hostile input at the submit and read edge (issue: hardening): text named like audio is
 * refused with 415 before a job exists, an absurdly long file name is 422, a keyless caller
 * cannot tell an account's job from a missing id, and the batch status call spends its own
 * budget, not the account's request budget.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accepted, expectError, listJobs, postJson, request, submitFile } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

let server: TestServer
let key: string
const standIn = makeStandIn({ delayMs: 50, steps: 1 })

beforeAll(async () => {
  server = await startServer("hostile-intake", { rateLimitPerMinute: 60, batchStatusPerMinute: 600 }, { pipeline: standIn.layer })
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
})

const storedFiles = () => {
  const root = path.join(server.storage.dataDir, "media")
  if (!fs.existsSync(root)) return []
  return fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name)
}

describe("multipart content sniffing", () => {
  it("refuses text named .wav with 415 BAD_MIME, creates no job and keeps no file", async () => {
    const before = storedFiles().length
    const text = new TextEncoder().encode("This is a transcript, not a recording.\nSecond line.\n")
    const response = await submitFile(server, { key, file: { name: "notes.wav", bytes: text, type: "audio/wav" } })
    await expectError(response, 415, "BAD_MIME")
    expect((await listJobs(server, key)).total).toBe(0)
    expect(storedFiles().length).toBe(before)
  })

  it("refuses a PNG named .mp3 with 415 BAD_MIME", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, ...new Array(64).fill(0)])
    await expectError(await submitFile(server, { key, file: { name: "cover.mp3", bytes: png, type: "audio/mpeg" } }), 415, "BAD_MIME")
  })

  it("still accepts a real recording", async () => {
    await accepted(await submitFile(server, { key, file: { name: "ok.wav", bytes: tinyWav(), type: "audio/wav" } }))
  })
})

describe("file names", () => {
  it("refuses a 10,000-character file name with 422 and a detail entry", async () => {
    const response = await submitFile(server, { key, file: { name: `${"a".repeat(10_000)}.wav`, bytes: tinyWav() } })
    expect(response.status).toBe(422)
    const body = await response.json() as { code: string; detail: Array<{ loc: Array<string> }> }
    expect(body.code).toBe("VALIDATION_FAILED")
    expect(body.detail[0]!.loc).toEqual(["body", "file", "filename"])
  })
})

describe("keyless reads", () => {
  it("answer an account's job and a missing id alike", async () => {
    const job = await accepted(await submitFile(server, { key, file: { name: "mine.wav", bytes: tinyWav() } }))
    const owned = await request(server, "GET", `/v1/jobs/${job.job_id}`)
    const missing = await request(server, "GET", `/v1/jobs/${crypto.randomUUID()}`)
    expect(owned.status).toBe(missing.status)
    const [a, b] = [await owned.json() as Record<string, unknown>, await missing.json() as Record<string, unknown>]
    expect(a).toEqual(b)
    expect(a.code).toBe("MISSING_API_KEY")
  })
})

describe("batch status budget", () => {
  it("allows more batch calls than the account's per-minute budget and leaves that budget untouched", async () => {
    const owner = await server.account()
    const calls = await Promise.all(
      Array.from({ length: 100 }, () => postJson(server, "/v1/jobs/status", { ids: [crypto.randomUUID()] }, owner.key))
    )
    expect(calls.map((r) => r.status).filter((s) => s !== 200)).toEqual([])
    expect((await server.get("/v1/me", { "X-API-Key": owner.key })).status).toBe(200)
  })
})
