/**
 * kill -9 at the application level: the real `verbatim serve` process with the REAL pipeline
 * (whisper-base) works on a ~2.5-minute recording; once `GET` shows it processing, the
 * process is killed with SIGKILL and started again on the same storage (embedded data dir
 * or Postgres database). The job must end done exactly once: status done, a transcript,
 * and exactly one `job.done` webhook (the account is on the enterprise plan, so its end is
 * observable from outside the process).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestStorage, type TestStorage } from "../support/database.ts"
import { type Job, sleep } from "../support/jobsClient.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { runCliJson, type ServerProcess, startServerProcess } from "../support/process.ts"
import { freePort } from "../support/ports.ts"
import { readWavPcm16, writeWav } from "../support/wav.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhookReceiver.ts"

let storage: TestStorage
let receiver: WebhookReceiver
let workDir: string
let recording: string
let env: Record<string, string>
let apiKey: string
const processes: Array<ServerProcess> = []

/** The speech clips of shared/media, twice over: about 2.4 minutes of 16 kHz mono. */
const buildRecording = (file: string) => {
  // a01–a07 (a08, the 63 s interview added later, would push the recording past the bound below).
  const clips = fs.readdirSync(mediaDir).filter((name) => /^a0[1-7]_.*\.wav$/.test(name)).sort()
  const parts = clips.map((name) => readWavPcm16(path.join(mediaDir, name)))
  for (const part of parts) expect(part.sampleRate).toBe(16_000)
  const pause = new Float32Array(8_000)
  const pieces = [...parts, ...parts].flatMap((part) => [part.samples, pause])
  const total = pieces.reduce((sum, piece) => sum + piece.length, 0)
  const samples = new Float32Array(total)
  let at = 0
  for (const piece of pieces) {
    samples.set(piece, at)
    at += piece.length
  }
  writeWav(file, samples)
  return total / 16_000
}

beforeAll(async () => {
  storage = await makeTestStorage("api-kill9")
  receiver = await startWebhookReceiver()
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-kill9-media-"))
  recording = path.join(workDir, "long-meeting.wav")
  const seconds = buildRecording(recording)
  expect(seconds).toBeGreaterThan(120)
  expect(seconds).toBeLessThan(200)
  env = {
    ...storage.env,
    VERBATIM_MODEL: "whisper-base",
    VERBATIM_MODELS_DIR: modelsDir,
    VERBATIM_DECODER: "wasm",
    VERBATIM_FETCH_ALLOW: `127.0.0.1:${receiver.port}`,
    VERBATIM_RUNNER_PORT: String(await freePort()),
    VERBATIM_RATE_LIMIT_PER_MINUTE: "10000",
    VERBATIM_ENTERPRISE_RATE_LIMIT_PER_MINUTE: "10000"
  }
  await runCliJson(["admin", "account", "create", "--email", "kill9@example.com", "--api-access"], env)
  apiKey = (await runCliJson<{ key: string }>(["admin", "key", "create", "--email", "kill9@example.com"], env)).key
  await runCliJson(["admin", "plan", "set", "--email", "kill9@example.com", "--plan", "enterprise"], env)
}, 120_000)

afterAll(async () => {
  for (const server of processes) await server.stop("SIGKILL")
  await receiver?.close()
  await storage?.dispose()
  if (workDir !== undefined) fs.rmSync(workDir, { recursive: true, force: true })
})

const start = async () => {
  const server = await startServerProcess(env, 90_000)
  processes.push(server)
  return server
}

const readJob = async (server: ServerProcess, id: string) => {
  const response = await fetch(`${server.url}/v1/jobs/${id}`, { headers: { "X-API-Key": apiKey } })
  expect(response.status).toBe(200)
  return await response.json() as Job
}

const waitFor = async (server: ServerProcess, id: string, until: (job: Job) => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  let job = await readJob(server, id)
  while (!until(job)) {
    if (Date.now() > deadline) {
      throw new Error(`job ${id} stuck at ${JSON.stringify(job)}; server output:\n${server.output().slice(-3000)}`)
    }
    await sleep(250)
    job = await readJob(server, id)
  }
  return job
}

describe("kill -9 while a job is processing", () => {
  it("ends the job done exactly once after a restart on the same storage", async () => {
    const first = await start()
    const form = new FormData()
    form.append("file", new Blob([fs.readFileSync(recording)], { type: "audio/wav" }), "long-meeting.wav")
    form.append("webhook_url", receiver.url("/kill9"))
    const submitted = await fetch(`${first.url}/v1/transcribe`, { method: "POST", headers: { "X-API-Key": apiKey }, body: form })
    const answer = await submitted.json() as { job_id: string }
    expect(submitted.status, JSON.stringify(answer)).toBe(202)

    const processing = await waitFor(first, answer.job_id, (job) => job.status !== "queued", 60_000)
    expect(processing.status).toBe("processing")
    // Into the run a little, so the kill lands mid-transcription rather than at the claim.
    await sleep(1_500)
    expect((await readJob(first, answer.job_id)).status).toBe("processing")
    await first.stop("SIGKILL")
    expect(first.child.signalCode).toBe("SIGKILL")

    const second = await start()
    const done = await waitFor(second, answer.job_id, (job) => job.status === "done" || job.status === "failed", 150_000)
    expect(done, second.output().slice(-3000)).toMatchObject({ status: "done", progress: 100, speech_detected: true })
    expect(done.audio_duration_seconds).toBeGreaterThan(120)

    const result = await fetch(`${second.url}/v1/jobs/${answer.job_id}/result`, { headers: { "X-API-Key": apiKey } })
    expect(result.status).toBe(200)
    const transcript = await result.json() as { text: string; segments: Array<{ start: number; end: number }> }
    expect(transcript.text.toLowerCase()).toContain("budget")
    expect(transcript.text.toLowerCase()).toContain("library")
    // Both passes over the clips are there: the transcript covers the whole recording.
    expect(transcript.segments.at(-1)!.end).toBeGreaterThan(done.audio_duration_seconds! - 20)

    // Exactly one end event: wait for it, then for anything that might follow.
    const deadline = Date.now() + 15_000
    while (receiver.deliveries.length === 0 && Date.now() < deadline) await sleep(200)
    await sleep(3_000)
    const events = receiver.deliveries.map((delivery) => JSON.parse(delivery.body) as { type: string; data: Job })
    expect(events.map((event) => [event.type, event.data.job_id])).toEqual([["job.done", answer.job_id]])
    expect(events[0]!.data.completed_at).toBe(done.completed_at)
    const list = await fetch(`${second.url}/v1/jobs`, { headers: { "X-API-Key": apiKey } })
    expect(((await list.json()) as { total: number }).total).toBe(1)
  }, 240_000)
})
