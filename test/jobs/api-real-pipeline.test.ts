/**
 * The job API with the REAL default pipeline (WASM decoder, Silero VAD, Whisper tiny.en from
 * shared/models) on shared/media: speech ends done with the words in the transcript, a video
 * without an audio stream ends failed NO_AUDIO (not retryable), and silence ends done with
 * `speech_detected: false` and no segments. The three jobs run one after the other on the
 * single worker.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accepted, expectJobShape, request, submitFile, waitForJob } from "../support/jobsClient.ts"
import { mediaDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"

let server: TestServer
let key: string
const jobs: Record<string, string> = {}

const submitMedia = async (file: string, type: string) =>
  (await accepted(await submitFile(server, {
    key,
    file: { name: file, bytes: new Uint8Array(fs.readFileSync(path.join(mediaDir, file))), type }
  }))).job_id

beforeAll(async () => {
  server = await startServer("api-real", { rateLimitPerMinute: 10_000 })
  key = (await server.account()).key
  jobs["speech"] = await submitMedia("a01_slt_budget.wav", "audio/wav")
  jobs["video"] = await submitMedia("x01_video_no_audio.mp4", "video/mp4")
  jobs["silence"] = await submitMedia("n01_silence.wav", "audio/wav")
})
afterAll(async () => {
  await server?.close()
})

const transcript = async (id: string) => {
  const response = await request(server, "GET", `/v1/jobs/${id}/result`, key)
  expect(response.status).toBe(200)
  return await response.json() as { text: string; speech_detected: boolean; duration: number; segments: Array<{ start: number; end: number; text: string }> }
}

describe("the job API with the real pipeline", () => {
  it("transcribes a01 to done with the spoken words", async () => {
    const done = await waitForJob(server, key, jobs["speech"]!, undefined, { timeoutMs: 90_000, intervalMs: 250 })
    expectJobShape(done)
    expect(done).toMatchObject({ status: "done", speech_detected: true, filename: "a01_slt_budget.wav", progress: 100 })
    expect(done.audio_duration_seconds).toBeCloseTo(7.05, 1)
    expect(done.speech_ratio).toBeGreaterThan(0.3)
    const result = await transcript(jobs["speech"]!)
    expect(result.text.toLowerCase()).toContain("budget")
    expect(result.speech_detected).toBe(true)
    expect(result.segments.length).toBeGreaterThan(0)
    for (const segment of result.segments) {
      expect(segment.end).toBeGreaterThan(segment.start)
      expect(segment.end).toBeLessThanOrEqual(result.duration + 0.5)
    }
  })

  it("ends a video without an audio stream failed NO_AUDIO, not retryable", async () => {
    const failed = await waitForJob(server, key, jobs["video"]!, undefined, { timeoutMs: 90_000, intervalMs: 250 })
    expectJobShape(failed)
    expect(failed).toMatchObject({ status: "failed", error_code: "NO_AUDIO", retryable: false })
    expect(failed.error!.length).toBeGreaterThan(15)
    // The reason never leaks the server's storage path.
    expect(failed.error).not.toContain(server.storage.dataDir)
    const result = await request(server, "GET", `/v1/jobs/${jobs["video"]}/result`, key)
    expect(result.status).toBe(409)
  })

  it("ends silence done with speech_detected false and no segments", async () => {
    const done = await waitForJob(server, key, jobs["silence"]!, undefined, { timeoutMs: 90_000, intervalMs: 250 })
    expectJobShape(done)
    expect(done).toMatchObject({ status: "done", speech_detected: false })
    expect(done.speech_ratio).toBeLessThan(0.05)
    const result = await transcript(jobs["silence"]!)
    expect(result.speech_detected).toBe(false)
    expect(result.segments).toEqual([])
    expect(result.text).toBe("")
  })
})
