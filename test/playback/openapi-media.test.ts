/**
 * The playback and clip routes as `/openapi.json` describes them, over real sockets: every
 * JSON answer below (successes and errors: 400, 401, 402, 403, 404, 409, 410, 416, 422) has
 * its status listed for the operation and a body matching that status's schema; the signed
 * links' byte answers (200, 206, 304) are listed with the content types they are sent with.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeChecker } from "../contract/openApiCheck.ts"
import { finishedJob } from "../clips/support.ts"
import { accepted, submitFile } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

let server: TestServer
let checker: ReturnType<typeof makeChecker>
let spec: any
let key: string
let jobId: string

const transcript = {
  text: "One two.",
  language: "en",
  duration: 10,
  speech_detected: true,
  segments: [{ start: 0, end: 2, text: "One two.", speaker: null }]
}

beforeAll(async () => {
  server = await startServer("openapi-media", { workers: 1 }, { pipeline: makeStandIn({ delayMs: 50, steps: 1 }).layer })
  spec = await (await server.get("/openapi.json")).json()
  checker = makeChecker(spec)
  key = (await server.account()).key
  jobId = await finishedJob(server, key, { name: "doc.wav", bytes: tinyWav(undefined, 2) }, { durationSeconds: 10, transcript })
}, 60_000)
afterAll(async () => {
  await server?.close()
})

const call = async (method: string, url: string, status: number, init: { key?: string; json?: unknown; headers?: Record<string, string> } = {}) => {
  const headers: Record<string, string> = { ...init.headers }
  if (init.key !== undefined) headers["X-API-Key"] = init.key
  if (init.json !== undefined) headers["Content-Type"] = "application/json"
  const full = url.startsWith("http") ? url : server.url + url
  const response = await fetch(full, { method, headers, body: init.json === undefined ? null : JSON.stringify(init.json) })
  const checked = await checker.check(method, full, response)
  expect(checked.status, `${method} ${url}: ${JSON.stringify(checked.body)?.slice(0, 300)}`).toBe(status)
  return checked
}

describe("playback routes against the document", () => {
  it("documents the link's answers and its errors", async () => {
    const { body } = await call("GET", `/v1/jobs/${jobId}/audio/url`, 200, { key })
    const url = body.url as string
    // The bytes are listed with the type they are sent with (the WAV's own, not a wildcard).
    expect((await call("GET", url, 200)).headers.get("content-type")).toBe("audio/wav")
    expect((await call("GET", url, 206, { headers: { range: "bytes=0-9" } })).headers.get("content-type")).toBe("audio/wav")
    await call("GET", `/v1/jobs/nope/audio/url`, 400, { key })
    await call("GET", `/v1/jobs/${crypto.randomUUID()}/audio/url`, 404, { key })
    await call("GET", `/v1/jobs/${jobId}/audio`, 401)
    await call("GET", `/v1/jobs/${jobId}/audio?token=1.abcdefghijklmnopqrstuvwxyz`, 403)
    await call("GET", url, 416, { headers: { range: "bytes=999999-" } })
    await call("GET", `/v1/jobs/${crypto.randomUUID()}/audio?token=1.abcdefghijklmnopqrstuvwxyz`, 403)

    const gone = await finishedJob(server, key, { name: "gone.wav", bytes: tinyWav(undefined, 1) })
    const goneUrl = (await call("GET", `/v1/jobs/${gone}/audio/url`, 200, { key })).body.url as string
    fs.rmSync(path.join(server.storage.dataDir, "media", "jobs", gone, "original.wav"))
    await call("GET", goneUrl, 410)
    await call("GET", `/v1/jobs/${gone}/audio/url`, 410, { key })
    await call("DELETE", `/v1/jobs/${gone}`, 204, { key })
    await call("GET", goneUrl, 404)
  })

  it("lists the byte answers with their content types", () => {
    const audio = spec.paths["/v1/jobs/{job_id}/audio"].get.responses
    for (const status of ["200", "206"]) {
      const listed = Object.keys(audio[status].content)
      for (const type of ["audio/wav", "audio/mpeg", "audio/mp4", "audio/ogg", "audio/webm", "video/mp4", "video/webm"]) {
        expect(listed).toContain(type)
      }
      expect(listed).toContain("application/octet-stream")
      expect(listed.some((type) => type.includes("*"))).toBe(false)
    }
    expect(audio["304"].content).toBeUndefined()
    const video = spec.paths["/v1/clips/{clip_id}/video"].get.responses
    for (const status of ["200", "206"]) expect(Object.keys(video[status].content)).toEqual(["video/mp4"])
  })
})

describe("clip routes against the document", () => {
  it("documents creation, reads, deletion and their errors", async () => {
    const created = await call("POST", `/v1/jobs/${jobId}/clips`, 202, { key, json: { start_s: 0, end_s: 1, caption_style: "none" } })
    const clipId = created.body.clip_id as string
    await call("GET", `/v1/clips/${clipId}`, 200, { key })
    await call("POST", `/v1/jobs/${jobId}/clips`, 422, { key, json: { start_s: 3, end_s: 2 } })
    await call("POST", `/v1/jobs/${jobId}/clips`, 422, { key, json: { start_s: 0, end_s: 2, caption_style: "fancy" } })
    await call("POST", `/v1/jobs/nope/clips`, 400, { key, json: { start_s: 0, end_s: 2 } })
    await call("POST", `/v1/jobs/${crypto.randomUUID()}/clips`, 404, { key, json: { start_s: 0, end_s: 2 } })
    await call("POST", `/v1/jobs/${jobId}/clips`, 401, { json: { start_s: 0, end_s: 2 } })
    const running = (await accepted(await submitFile(server, {
      key,
      file: { name: "slow.wav", bytes: tinyWav({ delayMs: 5000, steps: 2 }, 2) }
    }))).job_id
    await call("POST", `/v1/jobs/${running}/clips`, 409, { key, json: { start_s: 0, end_s: 1.5 } })
    const poor = await server.account(undefined, { minutes: 0.04 })
    const poorJob = await finishedJob(server, poor.key, { name: "p.wav", bytes: tinyWav(undefined, 2) }, { durationSeconds: 10, transcript })
    await call("POST", `/v1/jobs/${poorJob}/clips`, 402, { key: poor.key, json: { start_s: 0, end_s: 5 } })
    await call("GET", `/v1/clips/${clipId}/video`, 401)
    await call("GET", `/v1/clips/${clipId}/video?token=1.abcdefghijklmnopqrstuvwxyz`, 403)
    await call("GET", `/v1/clips/nope`, 400, { key })
    await call("DELETE", `/v1/clips/${clipId}`, 204, { key })
    await call("GET", `/v1/clips/${clipId}`, 404, { key })
    await call("DELETE", `/v1/clips/${clipId}`, 404, { key })
  })
})
