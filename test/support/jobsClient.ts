/**
 * A small HTTP client for the job API in tests: submits (multipart, link, direct upload),
 * bounded polling, error-body checks, and raw socket requests for what `fetch` will not
 * send (a lying Content-Length, broken multipart framing). Job, submit and list answers
 * are decoded with the contract's own Schemas, strictly (an undocumented field fails), so
 * the tests read the shapes the API declares instead of copies of them.
 */
import { Schema } from "effect"
import { expect } from "vitest"
import * as net from "node:net"
import { JobList, JobView, SubmitAnswer } from "../../src/contract/domain/Job.ts"
import type { TestServer } from "./server.ts"

export type Job = JobView
export type { SubmitAnswer }

const strict = { onExcessProperty: "error" } as const
const decodeJob = Schema.decodeUnknownSync(JobView, strict)
const decodeSubmitAnswer = Schema.decodeUnknownSync(SubmitAnswer, strict)
const decodeJobList = Schema.decodeUnknownSync(JobList, strict)

export const keyHeaders = (key: string | undefined, extra: Record<string, string> = {}): Record<string, string> =>
  key === undefined ? { ...extra } : { "X-API-Key": key, ...extra }

export interface FilePart {
  readonly name: string
  readonly bytes: Uint8Array
  readonly type?: string
  /** Form field name; default `file`. */
  readonly field?: string
}

/** `POST /v1/transcribe` with a FormData body (fetch writes the multipart framing). */
export const submitFile = (
  server: TestServer,
  options: {
    readonly key?: string | undefined
    readonly file?: FilePart | undefined
    readonly fields?: Record<string, string>
    readonly headers?: Record<string, string>
  }
): Promise<Response> => {
  const form = new FormData()
  for (const [name, value] of Object.entries(options.fields ?? {})) form.append(name, value)
  if (options.file !== undefined) {
    const blob = new Blob([options.file.bytes as Uint8Array<ArrayBuffer>], { type: options.file.type ?? "audio/wav" })
    form.append(options.file.field ?? "file", blob, options.file.name)
  }
  return fetch(`${server.url}/v1/transcribe`, {
    method: "POST",
    headers: keyHeaders(options.key, options.headers),
    body: form
  })
}

export const postJson = (
  server: TestServer,
  path: string,
  body: unknown,
  key?: string,
  headers: Record<string, string> = {}
): Promise<Response> =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: keyHeaders(key, { "Content-Type": "application/json", ...headers }),
    body: JSON.stringify(body)
  })

export const submitUrl = (server: TestServer, key: string | undefined, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  postJson(server, "/v1/transcribe/url", body, key, headers)

export const request = (
  server: TestServer,
  method: string,
  path: string,
  key?: string,
  headers: Record<string, string> = {}
): Promise<Response> => fetch(`${server.url}${path}`, { method, headers: keyHeaders(key, headers) })

/** Reads the submit answer of an accepted (202) submit. */
export const accepted = async (response: Response): Promise<SubmitAnswer> => {
  const json: unknown = await response.json()
  expect(response.status, JSON.stringify(json)).toBe(202)
  const body = decodeSubmitAnswer(json)
  expect(body.job_id).toMatch(/^[0-9a-f-]{36}$/)
  expect(body.status).toBe("queued")
  return body
}

export const getJob = async (server: TestServer, key: string | undefined, id: string, headers: Record<string, string> = {}) => {
  const response = await request(server, "GET", `/v1/jobs/${id}`, key, headers)
  const json: unknown = await response.json()
  expect(response.status, JSON.stringify(json)).toBe(200)
  return decodeJob(json)
}

/** Polls `GET /v1/jobs/{id}` until `until` holds; fails after `timeoutMs` with the last state. */
export const waitForJob = async (
  server: TestServer,
  key: string | undefined,
  id: string,
  until: (job: Job) => boolean = (job) => job.status === "done" || job.status === "failed",
  options: { readonly timeoutMs?: number; readonly intervalMs?: number; readonly headers?: Record<string, string> } = {}
): Promise<Job> => {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000)
  let last: Job | undefined
  while (Date.now() < deadline) {
    last = await getJob(server, key, id, options.headers)
    if (until(last)) return last
    await sleep(options.intervalMs ?? 100)
  }
  throw new Error(`job ${id} did not reach the expected state in time; last: ${JSON.stringify(last)}`)
}

/** Polls any condition with a bound. */
export const eventually = async <A>(
  probe: () => Promise<A | undefined>,
  what: string,
  timeoutMs = 15_000,
  intervalMs = 100
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const value = await probe()
    if (value !== undefined) return value
    await sleep(intervalMs)
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Checks an error answer: status, JSON `{ error, code }` with a readable sentence. */
export const expectError = async (response: Response, status: number, code: string) => {
  const text = await response.text()
  expect(response.status, text).toBe(status)
  expect(response.headers.get("content-type")).toMatch(/application\/json/)
  const body = JSON.parse(text) as Record<string, unknown>
  expect(body["code"], text).toBe(code)
  expect(typeof body["error"]).toBe("string")
  expect((body["error"] as string).length).toBeGreaterThan(10)
  return body
}

/** Every Job field the spec lists, with its type. */
export const expectJobShape = (job: Job) => {
  expect(job.job_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  expect(["queued", "processing", "done", "failed"]).toContain(job.status)
  expect(typeof job.progress).toBe("number")
  expect(job.progress).toBeGreaterThanOrEqual(0)
  expect(job.progress).toBeLessThanOrEqual(100)
  expect(Number.isInteger(job.queue_position)).toBe(true)
  expect(job.queue_position).toBeGreaterThanOrEqual(0)
  if (job.status !== "queued") expect(job.queue_position).toBe(0)
  expect(job.filename === null || typeof job.filename === "string").toBe(true)
  expect(job.audio_duration_seconds === null || typeof job.audio_duration_seconds === "number").toBe(true)
  expect(job.language === null || typeof job.language === "string").toBe(true)
  expect(["upload", "url", "recording", "api"]).toContain(job.source)
  expect(typeof job.speech_detected).toBe("boolean")
  expect(job.speech_ratio).toBeGreaterThanOrEqual(0)
  expect(job.speech_ratio).toBeLessThanOrEqual(1)
  expect(typeof job.locked).toBe("boolean")
  expect(Number.isInteger(job.created_at)).toBe(true)
  // Unix seconds, not milliseconds.
  expect(Math.abs(job.created_at - Date.now() / 1000)).toBeLessThan(3600)
  expect(job.completed_at === null || Number.isInteger(job.completed_at)).toBe(true)
  if (job.status === "failed") {
    expect(typeof job.error).toBe("string")
    expect(typeof job.error_code).toBe("string")
    expect(typeof job.retryable).toBe("boolean")
  } else {
    expect(job.error).toBeNull()
    expect(job.error_code).toBeUndefined()
    expect(job.retryable).toBeUndefined()
  }
  if (job.status === "done" || job.status === "failed") {
    expect(job.completed_at).not.toBeNull()
    expect(job.completed_at!).toBeGreaterThanOrEqual(job.created_at)
  } else {
    expect(job.completed_at).toBeNull()
  }
}

export const listJobs = async (server: TestServer, key: string, query = "") => {
  const response = await request(server, "GET", `/v1/jobs${query}`, key)
  const json: unknown = await response.json()
  expect(response.status, JSON.stringify(json)).toBe(200)
  return decodeJobList(json)
}

export interface RawResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
  /** Bytes the client had written when the answer arrived. */
  readonly sentBytes: number
}

/**
 * Writes `head` (and `body`, if any) on a plain socket and reads one HTTP/1.1 answer. The
 * socket is ended only after the answer (or the timeout), so a server that waits for a body
 * never sent times out here instead of answering.
 */
export const rawRequest = (
  serverUrl: string,
  head: string,
  body: Uint8Array | string = "",
  timeoutMs = 10_000
): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const url = new URL(serverUrl)
    const socket = net.connect(Number(url.port), url.hostname)
    let received = Buffer.alloc(0)
    let sentBytes = 0
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no complete answer within ${timeoutMs} ms; got: ${received.toString("latin1").slice(0, 500)}`))
    }, timeoutMs)
    const tryParse = () => {
      const text = received.toString("latin1")
      const split = text.indexOf("\r\n\r\n")
      if (split < 0) return
      const [statusLine, ...lines] = text.slice(0, split).split("\r\n")
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const colon = line.indexOf(":")
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
      }
      const length = Number(headers["content-length"] ?? -1)
      const rest = received.subarray(Buffer.byteLength(text.slice(0, split + 4), "latin1"))
      if (length >= 0 && rest.length < length) return
      clearTimeout(timer)
      socket.destroy()
      resolve({
        status: Number(statusLine!.split(" ")[1]),
        headers,
        body: rest.subarray(0, length >= 0 ? length : rest.length).toString("utf8"),
        sentBytes
      })
    }
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk])
      tryParse()
    })
    socket.on("error", (error) => {
      clearTimeout(timer)
      if (received.length > 0) tryParse()
      else reject(error)
    })
    socket.on("connect", () => {
      socket.write(head)
      sentBytes += Buffer.byteLength(head)
      if (body.length > 0) {
        socket.write(body)
        sentBytes += typeof body === "string" ? Buffer.byteLength(body) : body.length
      }
    })
  })
