/**
 * `POST /v1/transcribe/url` over real sockets against local HTTP servers (spec, rule 5):
 * a direct media link and an RSS feed (its latest episode) end done; a 404, a playlist,
 * something that is not a link and a private address outside the allow-list are refused
 * up front with nothing queued; a source that disappears after the job was queued ends
 * the job failed with a `SOURCE_*` code. The link server's port is on the app's
 * `fetchAllow` list (loopback is private otherwise); a second server on another port is
 * not. The pipeline is the stand-in; the media are small real WAV files.
 */
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { respond, type Route, startTestServer, type TestServer as LinkServer } from "../support/linkTestServer.ts"
import { accepted, expectError, expectJobShape, listJobs, request, submitUrl, waitForJob } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

const scope = Effect.runSync(Scope.make())
const startLinkServer = (routes: Record<string, Route>) =>
  Effect.runPromise(Scope.provide(scope)(startTestServer(routes)))

let server: TestServer
let links: LinkServer
let outside: LinkServer
let key: string
const standIn = makeStandIn({ delayMs: 100, steps: 1 })

const direct = tinyWav({ text: "Direct link media." })
const latest = tinyWav({ text: "The latest episode." })
const older = tinyWav({ text: "An older episode." })
const wav = (bytes: Uint8Array): Route => respond(200, { "content-type": "audio/wav" }, bytes)

/** Serves media to the first `servedFor` requests, then answers `laterStatus`. */
const vanishing = (bytes: Uint8Array, laterStatus: number): Route => {
  let served = 0
  return (req, res, linkServer) => {
    if (served < 1) {
      served++
      return wav(bytes)(req, res, linkServer)
    }
    res.writeHead(laterStatus, { "content-type": "text/plain" }).end("gone away")
  }
}

const feed = (origin: string) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0">
<channel>
  <title>The Budget Show</title>
  <link>${origin}/</link>
  <item>
    <title>Older episode</title>
    <pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
    <enclosure url="${origin}/media/older.wav" length="${older.length}" type="audio/wav"/>
  </item>
  <item>
    <title>Latest episode</title>
    <pubDate>Wed, 10 Jan 2024 10:00:00 GMT</pubDate>
    <enclosure url="${origin}/media/latest.wav" length="${latest.length}" type="audio/wav"/>
  </item>
</channel>
</rss>`

beforeAll(async () => {
  links = await startLinkServer({
    "/media/direct.wav": wav(direct),
    "/media/latest.wav": wav(latest),
    "/media/older.wav": wav(older),
    "/feed.xml": (req, res, linkServer) => respond(200, { "content-type": "application/rss+xml" }, feed(linkServer.origin))(req, res, linkServer),
    "/list.m3u": respond(200, { "content-type": "audio/x-mpegurl" }, "#EXTM3U\n/media/direct.wav\n/media/older.wav\n"),
    "/media/vanishing-503.wav": vanishing(tinyWav(), 503),
    "/media/vanishing-404.wav": vanishing(tinyWav(), 404)
  })
  outside = await startLinkServer({ "/media/direct.wav": wav(direct) })
  server = await startServer(
    "api-links",
    { rateLimitPerMinute: 10_000, fetchAllow: [`127.0.0.1:${links.port}`] },
    { pipeline: standIn.layer }
  )
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const resultText = async (id: string) =>
  ((await (await request(server, "GET", `/v1/jobs/${id}/result`, key)).json()) as { text: string }).text

describe("POST /v1/transcribe/url", () => {
  it("transcribes a direct media link: 202, then done with the link's file name", async () => {
    const answer = await accepted(await submitUrl(server, key, { url: `${links.origin}/media/direct.wav`, language: "en" }))
    const done = await waitForJob(server, key, answer.job_id)
    expectJobShape(done)
    expect(done).toMatchObject({ status: "done", source: "url", filename: "direct.wav", language: "en" })
    expect(await resultText(answer.job_id)).toBe("Direct link media.")
    expect(links.hits).toContain("/media/direct.wav")
  })

  it("transcribes an RSS feed's latest episode", async () => {
    const answer = await accepted(await submitUrl(server, key, { url: `${links.origin}/feed.xml` }))
    const done = await waitForJob(server, key, answer.job_id)
    expect(done.status).toBe("done")
    expect(await resultText(answer.job_id)).toBe("The latest episode.")
  })

  describe("refusals queue nothing", () => {
    let totalBefore: number
    beforeAll(async () => {
      totalBefore = (await listJobs(server, key)).total!
    })

    it("refuses a link that answers 404 with 400 SOURCE_GONE", async () => {
      const body = await expectError(await submitUrl(server, key, { url: `${links.origin}/media/missing.mp3` }), 400, "SOURCE_GONE")
      expect(body["error"]).toMatch(/404/)
    })

    it("refuses text that is not a link with 400 BAD_URL, and one under 8 characters with 422", async () => {
      await expectError(await submitUrl(server, key, { url: "just some words" }), 400, "BAD_URL")
      await expectError(await submitUrl(server, key, { url: "ftp://example.com/show.mp3" }), 400, "BAD_URL")
      const body = await expectError(await submitUrl(server, key, { url: "a.b/c" }), 422, "VALIDATION_FAILED")
      expect(body["detail"]).toEqual([expect.objectContaining({ loc: ["body", "url"] })])
      await expectError(await submitUrl(server, key, {}), 422, "VALIDATION_FAILED")
      await expectError(await submitUrl(server, key, { url: `${links.origin}/media/direct.wav`, source: "rss" }), 422, "BAD_SOURCE")
    })

    it("refuses a playlist with several entries with 400 LINK_IS_A_LIST", async () => {
      await expectError(await submitUrl(server, key, { url: `${links.origin}/list.m3u` }), 400, "LINK_IS_A_LIST")
      await expectError(await submitUrl(server, key, { url: "https://www.youtube.com/playlist?list=PL0123456789" }), 400, "LINK_IS_A_LIST")
    })

    it("refuses private addresses outside the allow-list with 400 UNSUPPORTED_HOST without fetching", async () => {
      const before = outside.hits.length
      await expectError(await submitUrl(server, key, { url: `${outside.origin}/media/direct.wav` }), 400, "UNSUPPORTED_HOST")
      await expectError(await submitUrl(server, key, { url: "http://192.168.1.20/episode.mp3" }), 400, "UNSUPPORTED_HOST")
      await expectError(await submitUrl(server, key, { url: "http://[::1]/episode.mp3" }), 400, "UNSUPPORTED_HOST")
      expect(outside.hits.length).toBe(before)
    })

    it("created no job for any refusal", async () => {
      expect((await listJobs(server, key)).total).toBe(totalBefore)
    })
  })

  it("fails a job whose source disappears after queueing (503) with a retryable SOURCE_* code", async () => {
    const answer = await accepted(await submitUrl(server, key, { url: `${links.origin}/media/vanishing-503.wav` }))
    const failed = await waitForJob(server, key, answer.job_id)
    expectJobShape(failed)
    expect(failed).toMatchObject({ status: "failed", error_code: "SOURCE_UNAVAILABLE", retryable: true })
    expect(failed.error).toMatch(/503/)
    expect(failed.error!.length).toBeGreaterThan(15)
    expect(standIn.runs.get(answer.job_id)).toBeUndefined()
    await expectError(await request(server, "GET", `/v1/jobs/${answer.job_id}/result`, key), 409, "NOT_READY")
  })

  it("fails a job whose source is gone (404) after queueing with a SOURCE_* code and a readable error", async () => {
    const answer = await accepted(await submitUrl(server, key, { url: `${links.origin}/media/vanishing-404.wav` }))
    const failed = await waitForJob(server, key, answer.job_id)
    expectJobShape(failed)
    expect(failed.status).toBe("failed")
    expect(failed.error_code).toMatch(/^SOURCE_/)
    expect(failed.error).toMatch(/404/)
  })
})
