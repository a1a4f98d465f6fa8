/**
 * Operations endpoints over real sockets: `/healthz`, `/readyz` (ready, and 503 naming the
 * failing check when the model's files are absent), `/metrics` in Prometheus text (request
 * counts and latency histograms by route and status, jobs by state, process figures), task
 * start/end log lines, /metrics turned
 * off with `metrics: false`, and moved to its own port with `metricsPort`.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accepted, keyHeaders, submitFile, waitForJob } from "../support/jobsClient.ts"
import { freePort } from "../support/ports.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

const standIn = makeStandIn({ delayMs: 50, steps: 1 })
const servers: Array<TestServer> = []
const start = async (label: string, overrides: Parameters<typeof startServer>[1] = {}) => {
  const server = await startServer(label, overrides, { pipeline: standIn.layer })
  servers.push(server)
  return server
}

afterAll(async () => {
  for (const server of servers) await server.close()
})

describe("health, readiness and metrics on the API port", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await start("ops")
  })

  it("answers /healthz and /readyz without a key", async () => {
    expect(await (await server.get("/healthz")).json()).toEqual({ status: "ok" })
    const ready = await server.get("/readyz")
    expect(ready.status).toBe(200)
    const body = (await ready.json()) as { status: string; checks: Array<{ name: string; ok: boolean }> }
    expect(body.status).toBe("ready")
    expect(body.checks.map((check) => [check.name, check.ok])).toEqual([
      ["database", true],
      ["models", true],
      ["workers", true],
      ["disk", true]
    ])
  })

  it("exposes request, job and process metrics in Prometheus text", async () => {
    const { key } = await server.account()
    await server.get("/v1/me", keyHeaders(key))
    const job = await accepted(await submitFile(server, { key, file: { name: "a.wav", type: "audio/wav", bytes: tinyWav() } }))
    await waitForJob(server, key, job.job_id)
    await server.get(`/v1/jobs/${job.job_id}`, keyHeaders(key))
    const response = await server.get("/metrics")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/plain")
    const text = await response.text()
    expect(text).toMatch(/verbatim_http_requests_total\{[^}]*route="\/v1\/me"[^}]*status="200"[^}]*\} [1-9]/)
    // Ids in paths are folded into one route label.
    expect(text).toMatch(/route="\/v1\/jobs\/:id"/)
    expect(text).not.toContain(job.job_id)
    expect(text).toMatch(/verbatim_http_request_duration_seconds_bucket\{[^}]*le="0\.1"/)
    expect(text).toMatch(/verbatim_jobs\{status="done"\} [1-9]/)
    expect(text).toMatch(/verbatim_queue_depth 0/)
    expect(text).toMatch(/verbatim_tasks\{[^}]*kind="transcribe"/)
    expect(text).toMatch(/verbatim_audio_transcribed_seconds \d/)
    expect(text).toMatch(/verbatim_real_time_factor \d/)
    expect(text).toMatch(/process_resident_memory_bytes [1-9]/)
  })

  it("logs every task's start and end with job id, kind, duration and outcome", async () => {
    const { key } = await server.account()
    const job = await accepted(await submitFile(server, { key, file: { name: "b.wav", type: "audio/wav", bytes: tinyWav() } }))
    await waitForJob(server, key, job.job_id)
    const lines = server.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line["job_id"] === job.job_id)
    expect(lines.find((line) => line["msg"] === "task started")).toMatchObject({ kind: "transcribe", attempt: 1 })
    const ended = lines.find((line) => line["msg"] === "task ended")
    expect(ended).toMatchObject({ kind: "transcribe", outcome: "done", result: "job done" })
    expect(ended!["duration_ms"]).toBeTypeOf("number")
  })
})

describe("readiness failures and metrics placement", () => {
  it("answers 503 naming the models check when the model's files are absent", async () => {
    const emptyModels = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-no-models-"))
    const server = await start("ops-nomodels", { modelsDir: emptyModels })
    const response = await server.get("/readyz")
    expect(response.status).toBe(503)
    const body = (await response.json()) as { code: string; error: string; failing: Array<string> }
    expect(body.failing).toEqual(["models"])
    expect(body.code).toBe("NOT_READY_TO_SERVE")
    expect(body.error).toContain("verbatim models pull whisper-tiny.en")
  })

  it("turns /metrics off with metrics: false", async () => {
    const server = await start("ops-nometrics", { metrics: false })
    expect((await server.get("/metrics")).status).toBe(404)
    expect((await server.get("/readyz")).status).toBe(200)
  })

  it("serves /metrics on its own port when metricsPort is set", async () => {
    const port = await freePort()
    const server = await start("ops-metricsport", { metricsPort: Option.some(port) })
    expect((await server.get("/metrics")).status).toBe(404)
    const response = await fetch(`http://127.0.0.1:${port}/metrics`)
    expect(response.status).toBe(200)
    expect(await response.text()).toContain("process_resident_memory_bytes")
  })
})
