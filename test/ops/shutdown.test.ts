/**
 * Graceful shutdown of the real `verbatim serve` process (real pipeline, whisper-tiny.en):
 * SIGTERM while a job is transcribing makes the process stop listening and exit within the
 * documented bound (`VERBATIM_SHUTDOWN_GRACE_SECONDS` + 10 s), logging that it shuts down;
 * the running job is handed back (its durable message stays), so the next process on the
 * same storage finishes it: done, with a transcript.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { makeTestStorage, type TestStorage } from "../support/database.ts"
import { type Job, sleep } from "../support/jobsClient.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { freePort } from "../support/ports.ts"
import { runCliJson, type ServerProcess, startServerProcess } from "../support/process.ts"
import { readWavPcm16, writeWav } from "../support/wav.ts"

const graceSeconds = 5
let storage: TestStorage
let workDir: string
let recording: string
let env: Record<string, string>
let key: string
const processes: Array<ServerProcess> = []

beforeAll(async () => {
  storage = await makeTestStorage("ops-shutdown")
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-shutdown-"))
  recording = path.join(workDir, "meeting.wav")
  const clips = fs.readdirSync(mediaDir).filter((name) => /^a0\d_.*\.wav$/.test(name)).sort()
  const parts = clips.map((name) => readWavPcm16(path.join(mediaDir, name)).samples)
  const samples = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    samples.set(part, at)
    at += part.length
  }
  writeWav(recording, samples)
  env = {
    ...storage.env,
    VERBATIM_MODEL: "whisper-tiny.en",
    VERBATIM_MODELS_DIR: modelsDir,
    VERBATIM_DECODER: "wasm",
    VERBATIM_RUNNER_PORT: String(await freePort()),
    VERBATIM_RATE_LIMIT_PER_MINUTE: "10000",
    VERBATIM_SHUTDOWN_GRACE_SECONDS: String(graceSeconds)
  }
  await runCliJson(["admin", "account", "create", "--email", "shutdown@example.com", "--api-access"], env)
  await runCliJson(["admin", "credits", "grant", "--email", "shutdown@example.com", "--minutes", "100"], env)
  key = (await runCliJson<{ key: string }>(["admin", "key", "create", "--email", "shutdown@example.com"], env)).key
}, 120_000)

afterAll(async () => {
  for (const server of processes) await server.stop("SIGKILL")
  await storage?.dispose()
  if (workDir !== undefined) fs.rmSync(workDir, { recursive: true, force: true })
})

const getJob = async (server: ServerProcess, id: string) =>
  (await (await fetch(`${server.url}/v1/jobs/${id}`, { headers: { "x-api-key": key } })).json()) as Job

it("stops within the bound on SIGTERM and hands the running job back", async () => {
  const first = await startServerProcess(env, 90_000)
  processes.push(first)
  const form = new FormData()
  form.append("file", new Blob([fs.readFileSync(recording)], { type: "audio/wav" }), "meeting.wav")
  const submitted = await fetch(`${first.url}/v1/transcribe`, { method: "POST", headers: { "x-api-key": key }, body: form })
  expect(submitted.status).toBe(202)
  const { job_id } = (await submitted.json()) as { job_id: string }

  const deadline = Date.now() + 60_000
  while ((await getJob(first, job_id)).status !== "processing") {
    if (Date.now() > deadline) throw new Error("the job never started")
    await sleep(200)
  }

  const signalled = Date.now()
  await first.stop("SIGTERM")
  const took = (Date.now() - signalled) / 1000
  expect(took).toBeLessThan(graceSeconds + 10)
  console.log(`SIGTERM to exit: ${took.toFixed(2)} s, exit code ${first.child.exitCode}, signal ${first.child.signalCode}`)
  // An orderly exit, not the bound's forced exit (status 1 with its message).
  expect(first.output()).not.toContain("exiting anyway")
  expect(first.child.exitCode).toBe(130)
  expect(first.output()).toContain("\"msg\":\"shutting down\"")
  // Stopped taking work: nothing listens on the old address any more.
  await expect(fetch(`${first.url}/healthz`)).rejects.toThrow()

  const second = await startServerProcess(env, 90_000)
  processes.push(second)
  const finished = Date.now() + 150_000
  let job = await getJob(second, job_id)
  while (job.status !== "done" && job.status !== "failed") {
    if (Date.now() > finished) throw new Error(`the job did not finish after the restart: ${JSON.stringify(job)}`)
    await sleep(500)
    job = await getJob(second, job_id)
  }
  expect(job.status).toBe("done")
  const transcript = (await (await fetch(`${second.url}/v1/jobs/${job_id}/result?format=txt`, { headers: { "x-api-key": key } })).text())
  expect(transcript.toLowerCase()).toContain("good morning")
}, 300_000)
