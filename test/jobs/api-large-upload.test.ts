/**
 * A 1 GB multipart upload streamed to `POST /v1/transcribe` over a real socket: the body
 * (a WAV header declaring 1 GB of PCM, then zeros) is generated on the fly and written with
 * backpressure, so neither side ever holds the file. The server runs in this process, so
 * the process's memory, sampled while the upload runs, bounds the server's: its growth must
 * stay far below the file size. The stored object is checked byte for byte in size, the
 * job completes (stand-in pipeline; the real decoder probes the 1 GB container), and the
 * job is then deleted and purged so the object is removed.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sweep } from "../../services/jobs/JobWatchdog.ts"
import { controlledClock } from "../support/clock.ts"
import { expectJobShape, request, type SubmitAnswer, waitForJob } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn } from "../support/standInPipeline.ts"

const fileBytes = 1_000_000_000
const chunk = Buffer.alloc(1024 * 1024)

let server: TestServer
let key: string
const standIn = makeStandIn({ delayMs: 100, steps: 1 })

beforeAll(async () => {
  server = await startServer("api-large", { rateLimitPerMinute: 10_000 }, { pipeline: standIn.layer })
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
})

/** 16 kHz mono PCM16 header for `total` bytes of file (header included). */
const wavHeader = (total: number) => {
  const header = Buffer.alloc(44)
  header.write("RIFF", 0, "ascii")
  header.writeUInt32LE(total - 8, 4)
  header.write("WAVE", 8, "ascii")
  header.write("fmt ", 12, "ascii")
  header.writeUInt32LE(16, 16)
  header.writeUInt16LE(1, 20)
  header.writeUInt16LE(1, 22)
  header.writeUInt32LE(16_000, 24)
  header.writeUInt32LE(32_000, 28)
  header.writeUInt16LE(2, 32)
  header.writeUInt16LE(16, 34)
  header.write("data", 36, "ascii")
  header.writeUInt32LE(total - 44, 40)
  return header
}

/** Streams one multipart request whose `file` part is `fileBytes` long; resolves with the answer. */
const streamUpload = () =>
  new Promise<{ status: number; body: string; seconds: number }>((resolve, reject) => {
    const boundary = "----verbatim-large-upload-boundary"
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="language"\r\n\r\nen\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="large.wav"\r\n` +
        "Content-Type: audio/wav\r\n\r\n"
    )
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
    const url = new URL(server.url)
    const started = performance.now()
    const req = http.request({
      host: url.hostname,
      port: Number(url.port),
      method: "POST",
      path: "/v1/transcribe",
      headers: {
        "X-API-Key": key,
        "Content-Type": `multipart/form-data; boundary=${boundary}`,
        "Content-Length": String(head.length + fileBytes + tail.length)
      }
    }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (text: string) => (body += text))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, seconds: (performance.now() - started) / 1000 }))
    })
    req.on("error", reject)
    const write = (buffer: Buffer) =>
      new Promise<void>((done) => {
        if (req.write(buffer)) done()
        else req.once("drain", () => done())
      })
    void (async () => {
      await write(head)
      await write(wavHeader(fileBytes))
      let sent = 44
      while (sent < fileBytes) {
        const n = Math.min(chunk.length, fileBytes - sent)
        await write(n === chunk.length ? chunk : chunk.subarray(0, n))
        sent += n
      }
      await write(tail)
      req.end()
    })().catch(reject)
  })

describe("a 1 GB multipart upload", () => {
  it("streams to storage with bounded memory and becomes a job", async () => {
    const baseline = process.memoryUsage()
    let peakRss = baseline.rss
    let peakHeap = baseline.heapUsed
    let peakBuffers = baseline.arrayBuffers
    const sampler = setInterval(() => {
      const now = process.memoryUsage()
      peakRss = Math.max(peakRss, now.rss)
      peakHeap = Math.max(peakHeap, now.heapUsed)
      peakBuffers = Math.max(peakBuffers, now.arrayBuffers)
    }, 20)
    let answer: { status: number; body: string; seconds: number }
    try {
      answer = await streamUpload()
    } finally {
      clearInterval(sampler)
    }
    const mb = (bytes: number) => Math.round(bytes / 1024 / 1024)
    const figures = {
      seconds: Math.round(answer.seconds * 10) / 10,
      baselineRssMb: mb(baseline.rss),
      peakRssMb: mb(peakRss),
      rssGrowthMb: mb(peakRss - baseline.rss),
      heapGrowthMb: mb(peakHeap - baseline.heapUsed),
      arrayBufferGrowthMb: mb(peakBuffers - baseline.arrayBuffers)
    }
    console.info(`1 GB upload: ${JSON.stringify(figures)}`)

    expect(answer.status, answer.body).toBe(202)
    const submitted = JSON.parse(answer.body) as SubmitAnswer
    expect(submitted.status).toBe("queued")
    expect(figures.rssGrowthMb).toBeLessThan(200)
    expect(figures.heapGrowthMb).toBeLessThan(200)

    const stored = path.join(server.storage.dataDir, "media", "jobs", submitted.job_id, "original.wav")
    expect(fs.statSync(stored).size).toBe(fileBytes)

    const done = await waitForJob(server, key, submitted.job_id, undefined, { timeoutMs: 30_000 })
    expectJobShape(done)
    expect(done).toMatchObject({ status: "done", filename: "large.wav", language: "en" })

    expect((await request(server, "DELETE", `/v1/jobs/${submitted.job_id}`, key)).status).toBe(204)
    const clock = controlledClock(Date.now())
    clock.advance("25 hours")
    await server.run(clock.at(sweep))
    expect(fs.existsSync(stored)).toBe(false)
  }, 180_000)
})
