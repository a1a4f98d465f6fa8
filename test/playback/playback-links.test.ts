/**
 * Playback links over real sockets: `GET /v1/jobs/{id}/audio/url` hands out a signed link (a
 * path on the API, which the client puts on the API root it used, per the spec) that serves the uploaded bytes without a key, with single / open / suffix ranges (206),
 * unsatisfiable ranges (416), HEAD, validators and conditional requests (304, If-Range);
 * altered, foreign and expired tokens are refused (403, with a controlled clock minting
 * the expired one), a missing token is 401, a deleted job's link 404, and audio gone from
 * storage 410 AUDIO_MISSING on both endpoints while the transcript stays readable.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LinkTokens } from "../../services/playback/LinkTokens.ts"
import { audioPath } from "../../services/playback/Playback.ts"
import { controlledClock } from "../support/clock.ts"
import { accepted, expectError, request, submitFile, waitForJob } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

let server: TestServer
let key: string
let jobId: string
let signedUrl: string
const bytes = tinyWav(undefined, 1)
const standIn = makeStandIn({ delayMs: 50, steps: 1 })

const submitDone = async (name: string, body: Uint8Array, apiKey = key) => {
  const id = (await accepted(await submitFile(server, { key: apiKey, file: { name, bytes: body } }))).job_id
  const job = await waitForJob(server, apiKey, id)
  expect(job.status).toBe("done")
  return id
}

const linkFor = async (id: string, apiKey = key) => {
  const response = await request(server, "GET", `/v1/jobs/${id}/audio/url`, apiKey)
  const body = await response.json() as { url: string; expires_in: number; storage: string }
  expect(response.status, JSON.stringify(body)).toBe(200)
  return body
}

beforeAll(async () => {
  server = await startServer("playback", { workers: 1 }, { pipeline: standIn.layer })
  key = (await server.account()).key
  jobId = await submitDone("talk.wav", bytes)
  signedUrl = server.url + (await linkFor(jobId)).url
}, 60_000)
afterAll(async () => {
  await server?.close()
})

const fetchSigned = (url: string, headers: Record<string, string> = {}, method = "GET") => fetch(url, { method, headers })

describe("GET /v1/jobs/{job_id}/audio/url", () => {
  it("answers a signed link as a path for the API root the caller used, with its lifetime", async () => {
    const link = await linkFor(jobId)
    expect(link.storage).toBe("signed")
    expect(link.expires_in).toBe(3600)
    // The spec's shape: a path, so `root + url` is the link (an absolute URL would double the host).
    expect(link.url).toMatch(new RegExp(`^/v1/jobs/${jobId}/audio\\?token=[^&]+$`))
    expect(link.url).not.toContain(key)
    const viaRoot = await fetchSigned(server.url + link.url)
    expect(viaRoot.status).toBe(200)
    expect(Buffer.from(await viaRoot.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true)
  })

  it("needs a key, a UUID and the caller's own job", async () => {
    await expectError(await request(server, "GET", `/v1/jobs/${jobId}/audio/url`, undefined), 401, "MISSING_API_KEY")
    await expectError(await request(server, "GET", `/v1/jobs/not-a-uuid/audio/url`, key), 400, "BAD_ID")
    const other = (await server.account()).key
    await expectError(await request(server, "GET", `/v1/jobs/${jobId}/audio/url`, other), 404, "NOT_FOUND")
    await expectError(await request(server, "GET", `/v1/jobs/${crypto.randomUUID()}/audio/url`, key), 404, "NOT_FOUND")
  })
})

describe("the signed audio link", () => {
  it("serves the original bytes without a key, with type, length and validators", async () => {
    const response = await fetchSigned(signedUrl)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("audio/wav")
    expect(response.headers.get("accept-ranges")).toBe("bytes")
    expect(response.headers.get("content-length")).toBe(String(bytes.length))
    expect(response.headers.get("etag")).toMatch(/^"[0-9a-f]+-[0-9a-f]+-[0-9a-f]+"$/)
    expect(new Date(response.headers.get("last-modified")!).getTime()).toBeGreaterThan(0)
    expect(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true)
  })

  it("answers HEAD with the headers and no body", async () => {
    const response = await fetchSigned(signedUrl, {}, "HEAD")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-length")).toBe(String(bytes.length))
    expect((await response.arrayBuffer()).byteLength).toBe(0)
    const ranged = await fetchSigned(signedUrl, { range: "bytes=0-9" }, "HEAD")
    expect(ranged.status).toBe(206)
    expect(ranged.headers.get("content-range")).toBe(`bytes 0-9/${bytes.length}`)
  })

  const slice = async (range: string) => {
    const response = await fetchSigned(signedUrl, { range })
    return { response, body: Buffer.from(await response.arrayBuffer()) }
  }

  it("serves single, open and suffix ranges as 206 with Content-Range", async () => {
    const size = bytes.length
    const single = await slice("bytes=10-19")
    expect(single.response.status).toBe(206)
    expect(single.response.headers.get("content-range")).toBe(`bytes 10-19/${size}`)
    expect(single.response.headers.get("content-length")).toBe("10")
    expect(single.body.equals(Buffer.from(bytes.subarray(10, 20)))).toBe(true)

    const open = await slice(`bytes=${size - 5}-`)
    expect(open.response.status).toBe(206)
    expect(open.response.headers.get("content-range")).toBe(`bytes ${size - 5}-${size - 1}/${size}`)
    expect(open.body.equals(Buffer.from(bytes.subarray(size - 5)))).toBe(true)

    const suffix = await slice("bytes=-4")
    expect(suffix.response.status).toBe(206)
    expect(suffix.body.equals(Buffer.from(bytes.subarray(size - 4)))).toBe(true)

    const longSuffix = await slice(`bytes=-${size + 100}`)
    expect(longSuffix.response.status).toBe(206)
    expect(longSuffix.response.headers.get("content-range")).toBe(`bytes 0-${size - 1}/${size}`)

    const pastEnd = await slice(`bytes=${size - 2}-${size + 1000}`)
    expect(pastEnd.response.status).toBe(206)
    expect(pastEnd.body.length).toBe(2)

    const lastByte = await slice(`bytes=${size - 1}-${size - 1}`)
    expect(lastByte.body.equals(Buffer.from(bytes.subarray(size - 1)))).toBe(true)
  })

  it("answers 416 with bytes */size when no byte of the range exists", async () => {
    for (const range of [`bytes=${bytes.length}-`, `bytes=${bytes.length + 10}-${bytes.length + 20}`, "bytes=-0"]) {
      const response = await fetchSigned(signedUrl, { range })
      expect(response.headers.get("content-range"), range).toBe(`bytes */${bytes.length}`)
      await expectError(response, 416, "RANGE_NOT_SATISFIABLE")
    }
  })

  it("sends the whole file for malformed, reversed and multi-range headers", async () => {
    for (const range of ["bytes=5-2", "bytes=0-1,4-5", "items=0-3", "bytes=abc"]) {
      const response = await fetchSigned(signedUrl, { range })
      expect(response.status, range).toBe(200)
      expect((await response.arrayBuffer()).byteLength).toBe(bytes.length)
    }
  })

  it("answers conditional requests: If-None-Match, If-Modified-Since, If-Range", async () => {
    const first = await fetchSigned(signedUrl)
    await first.arrayBuffer()
    const etag = first.headers.get("etag")!
    const lastModified = first.headers.get("last-modified")!

    const cached = await fetchSigned(signedUrl, { "if-none-match": etag })
    expect(cached.status).toBe(304)
    expect(cached.headers.get("etag")).toBe(etag)
    expect((await cached.arrayBuffer()).byteLength).toBe(0)
    expect((await fetchSigned(signedUrl, { "if-none-match": `"other", ${etag}` })).status).toBe(304)
    expect((await fetchSigned(signedUrl, { "if-none-match": "*" })).status).toBe(304)
    const changed = await fetchSigned(signedUrl, { "if-none-match": "\"other\"" })
    expect(changed.status).toBe(200)
    await changed.arrayBuffer()

    expect((await fetchSigned(signedUrl, { "if-modified-since": lastModified })).status).toBe(304)
    const older = new Date(new Date(lastModified).getTime() - 60_000).toUTCString()
    const modified = await fetchSigned(signedUrl, { "if-modified-since": older })
    expect(modified.status).toBe(200)
    await modified.arrayBuffer()
    // If-None-Match wins over If-Modified-Since.
    const both = await fetchSigned(signedUrl, { "if-none-match": "\"other\"", "if-modified-since": lastModified })
    expect(both.status).toBe(200)
    await both.arrayBuffer()

    const sameVersion = await fetchSigned(signedUrl, { range: "bytes=0-3", "if-range": etag })
    expect(sameVersion.status).toBe(206)
    await sameVersion.arrayBuffer()
    const sameDate = await fetchSigned(signedUrl, { range: "bytes=0-3", "if-range": lastModified })
    expect(sameDate.status).toBe(206)
    await sameDate.arrayBuffer()
    const otherVersion = await fetchSigned(signedUrl, { range: "bytes=0-3", "if-range": "\"stale\"" })
    expect(otherVersion.status).toBe(200)
    expect((await otherVersion.arrayBuffer()).byteLength).toBe(bytes.length)
  })
})

describe("refused tokens", () => {
  it("answers 401 TOKEN_MISSING without a token", async () => {
    await expectError(await fetchSigned(`${server.url}/v1/jobs/${jobId}/audio`), 401, "TOKEN_MISSING")
    await expectError(await fetchSigned(`${server.url}/v1/jobs/${jobId}/audio?token=`), 401, "TOKEN_MISSING")
  })

  it("answers 403 TOKEN_INVALID for altered signatures, extended expiries and other jobs' tokens", async () => {
    const token = new URL(signedUrl).searchParams.get("token")!
    const [expiry, signature] = token.split(".") as [string, string]
    const flipped = signature.slice(0, -1) + (signature.endsWith("A") ? "B" : "A")
    const tampered = [
      `${expiry}.${flipped}`,
      `${Number(expiry) + 86_400}.${signature}`,
      signature,
      `${expiry}.${signature}.x`,
      "garbage"
    ]
    for (const bad of tampered) {
      await expectError(await fetchSigned(`${server.url}${audioPath(jobId, bad)}`), 403, "TOKEN_INVALID")
    }
    const otherJob = await submitDone("other.wav", tinyWav(undefined, 0.5))
    await expectError(await fetchSigned(`${server.url}${audioPath(otherJob, token)}`), 403, "TOKEN_INVALID")
    // The other job's own link works.
    expect((await fetchSigned(server.url + (await linkFor(otherJob)).url)).status).toBe(200)
  })

  it("answers 403 TOKEN_EXPIRED once the lifetime has passed (token minted on a controlled clock)", async () => {
    const clock = controlledClock(Date.now() - 2 * 3600_000)
    const mint = (lifetime: number) =>
      server.run(clock.at(Effect.gen(function*() {
        return yield* (yield* LinkTokens).issue("audio", jobId, lifetime)
      }).pipe(Effect.provide(LinkTokens.layer))))
    const expired = await mint(3600)
    await expectError(await fetchSigned(`${server.url}${audioPath(jobId, expired.token)}`), 403, "TOKEN_EXPIRED")
    // Minted at the same moment with a lifetime reaching past now: still good.
    const alive = await mint(3 * 3600)
    expect((await fetchSigned(`${server.url}${audioPath(jobId, alive.token)}`)).status).toBe(200)
  })
})

describe("links that stop working", () => {
  it("a deleted job's link answers 404", async () => {
    const id = await submitDone("deleted.wav", tinyWav(undefined, 0.5))
    const url = server.url + (await linkFor(id)).url
    expect((await fetchSigned(url)).status).toBe(200)
    expect((await request(server, "DELETE", `/v1/jobs/${id}`, key)).status).toBe(204)
    await expectError(await fetchSigned(url), 404, "NOT_FOUND")
    await expectError(await request(server, "GET", `/v1/jobs/${id}/audio/url`, key), 404, "NOT_FOUND")
  })

  it("audio gone from storage answers 410 AUDIO_MISSING; the transcript stays readable", async () => {
    const id = await submitDone("gone.wav", tinyWav(undefined, 0.5))
    const url = server.url + (await linkFor(id)).url
    fs.rmSync(path.join(server.storage.dataDir, "media", "jobs", id, "original.wav"))
    await expectError(await fetchSigned(url), 410, "AUDIO_MISSING")
    await expectError(await request(server, "GET", `/v1/jobs/${id}/audio/url`, key), 410, "AUDIO_MISSING")
    const transcript = await request(server, "GET", `/v1/jobs/${id}/result?format=txt`, key)
    expect(transcript.status).toBe(200)
    expect((await transcript.text()).length).toBeGreaterThan(0)
  })
})
