/**
 * `GET /v1/jobs/{job_id}/clips/candidates` and `/clips/search` over a real socket on a real
 * transcript: a08 (a three-voice interview about coastal erosion, sea walls and dunes)
 * transcribed by whisper-tiny.en. Every kind keeps the rules (10–60 s, on phrase boundaries of
 * the transcript, non-overlapping, best first, scores in 0..1, a reason); the question kind holds
 * a question; the search inside the job finds the sea-wall moment. Refusals: 422 for an unknown
 * kind, 404 across accounts, 402 for a locked job.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { phrasesOf } from "../../services/search-index/ClipCandidates.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { accepted, eventually, expectError, postJson, request, submitFile, waitForJob } from "../support/jobsClient.ts"
import { mediaDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"

interface Candidate {
  start: number
  end: number
  text: string
  kind: string
  score: number
  reason: string
}

let server: TestServer
let key: string
let id: string
let transcript: Transcript

beforeAll(async () => {
  server = await startServer("api-candidates", { rateLimitPerMinute: 10_000 })
  key = (await server.account()).key
  id = (await accepted(await submitFile(server, {
    key,
    file: { name: "a08.wav", bytes: new Uint8Array(fs.readFileSync(path.join(mediaDir, "a08_interview_three_speakers.wav"))) }
  }))).job_id
  await waitForJob(server, key, id, undefined, { timeoutMs: 240_000, intervalMs: 500 })
  transcript = await (await request(server, "GET", `/v1/jobs/${id}/result?format=json`, key)).json() as Transcript
}, 300_000)
afterAll(async () => {
  await server?.close()
})

const candidates = async (kind?: string): Promise<Array<Candidate>> => {
  const response = await request(server, "GET", `/v1/jobs/${id}/clips/candidates${kind === undefined ? "" : `?kind=${kind}`}`, key)
  const text = await response.text()
  expect(response.status, text).toBe(200)
  const body = JSON.parse(text) as { candidates: Array<Candidate> }
  expect(Object.keys(body)).toEqual(["candidates"])
  return body.candidates
}

describe("clip candidates on a real interview", () => {
  it("keeps the rules for every kind: 10–60 s, phrase boundaries, no overlap, best first", async () => {
    const phrases = phrasesOf(transcript)
    const starts = new Set(phrases.map((p) => Math.round(p.start * 1000) / 1000))
    const ends = new Set(phrases.map((p) => Math.round(p.end * 1000) / 1000))
    const all = await candidates()
    expect(all).toEqual(await candidates("all"))
    expect(all.length).toBeGreaterThanOrEqual(2)
    for (const kind of ["hook", "quote", "question", "insight", undefined]) {
      const list = kind === undefined ? all : await candidates(kind)
      for (const [i, c] of list.entries()) {
        if (kind !== undefined) expect(c.kind).toBe(kind)
        expect(["hook", "quote", "question", "insight"]).toContain(c.kind)
        expect(c.end - c.start, JSON.stringify(c)).toBeGreaterThanOrEqual(10)
        expect(c.end - c.start, JSON.stringify(c)).toBeLessThanOrEqual(60)
        expect(starts.has(c.start), `${c.start} starts a phrase`).toBe(true)
        expect(ends.has(c.end), `${c.end} ends a phrase`).toBe(true)
        expect(c.score).toBeGreaterThan(0)
        expect(c.score).toBeLessThanOrEqual(1)
        expect(c.reason).toMatch(/\d+ s$/)
        expect(transcript.text.replace(/\s+/g, " ")).toContain(c.text.split(" ").slice(0, 4).join(" "))
        if (i > 0) expect(c.score).toBeLessThanOrEqual(list[i - 1]!.score)
        for (const earlier of list.slice(0, i)) expect(c.start >= earlier.end || c.end <= earlier.start).toBe(true)
      }
    }
    for (const c of await candidates("question")) expect(c.text).toContain("?")
  })

  it("finds the sea-wall moment with a search inside the job", async () => {
    await eventually(async () => {
      const response = await postJson(server, "/v1/library/search", { q: "sea wall", job_ids: [id] }, key)
      return ((await response.json()) as { hits: Array<unknown> }).hits.length > 0 ? true : undefined
    }, "a08 indexed", 60_000, 300)
    const response = await request(server, "GET", `/v1/jobs/${id}/clips/search?q=${encodeURIComponent("how much would a sea wall cost")}`, key)
    const body = await response.json() as { moments: Array<{ job_id: string; text: string; start: number; end: number }> }
    expect(response.status).toBe(200)
    expect(body.moments.length).toBeGreaterThan(0)
    expect(body.moments.every((m) => m.job_id === id)).toBe(true)
    expect(body.moments[0]!.text.toLowerCase()).toMatch(/wall|cost|million|pound|dollar/)
  })

  it("answers 422 for an unknown kind, 404 across accounts, 402 for a locked job", async () => {
    await expectError(await request(server, "GET", `/v1/jobs/${id}/clips/candidates?kind=viral`, key), 422, "VALIDATION_FAILED")
    const stranger = (await server.account()).key
    await expectError(await request(server, "GET", `/v1/jobs/${id}/clips/candidates`, stranger), 404, "NOT_FOUND")
    await expectError(await request(server, "GET", `/v1/jobs/${id}/clips/search?q=dunes`, stranger), 404, "NOT_FOUND")
    await expectError(await request(server, "GET", `/v1/jobs/not-a-uuid/clips/candidates`, key), 400, "BAD_ID")
    await server.run(Effect.gen(function*() {
      yield* (yield* SqlClient.SqlClient)`UPDATE jobs SET locked = true WHERE id = ${id}`.pipe(Effect.orDie)
    }))
    const locked = await expectError(await request(server, "GET", `/v1/jobs/${id}/clips/candidates`, key), 402, "transcript_locked")
    expect(typeof locked["checkout_url"]).toBe("string")
    await expectError(await request(server, "GET", `/v1/jobs/${id}/clips/search?q=dunes`, key), 402, "transcript_locked")
  })
})
