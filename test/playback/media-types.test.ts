/**
 * The type the signed audio link serves, over real sockets. It is sniffed from the bytes when
 * the job's media is accepted and stored (`jobs.media_type`) on every way in — multipart with
 * a key and keyless, the typed client's direct upload, a fetched link — whatever the sender
 * declared (the typed client and many tools declare `application/octet-stream`). A row from
 * before the column is sniffed on its first play and remembered. The typed client's playback
 * helper puts the signed path on its API root (the spec's "Playback URL").
 */
import { Effect, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createClient } from "verbatim/client"
import { respond, startTestServer, type TestServer as LinkServer } from "../support/linkTestServer.ts"
import { accepted, request, submitFile, submitUrl, waitForJob } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"
import { m4aBytes, mp4Bytes, opusBytes, webmBytes } from "./mediaFixtures.ts"

const scope = Effect.runSync(Scope.make())
let server: TestServer
let links: LinkServer
let key: string
const wav = tinyWav(undefined, 0.5)

beforeAll(async () => {
  links = await Effect.runPromise(Scope.provide(scope)(startTestServer({
    // A server that does not say what it sends.
    "/media/episode.wav": respond(200, { "content-type": "application/octet-stream" }, wav)
  })))
  server = await startServer(
    "playback-types",
    { workers: 1, rateLimitPerMinute: 10_000, fetchAllow: [`127.0.0.1:${links.port}`] },
    { pipeline: makeStandIn({ delayMs: 50, steps: 1 }).layer }
  )
  key = (await server.account()).key
}, 60_000)
afterAll(async () => {
  await server?.close()
  await Effect.runPromise(Scope.close(scope, Effect.void as never))
})

/** The signed link of a job, fetched on the server's root: its status and Content-Type. */
const served = async (jobId: string, claimToken?: string) => {
  const link = claimToken === undefined
    ? await request(server, "GET", `/v1/jobs/${jobId}/audio/url`, key)
    : await request(server, "GET", `/v1/jobs/${jobId}/audio/url`, undefined, { "x-claim-token": claimToken })
  const body = await link.json() as { url: string }
  expect(link.status, JSON.stringify(body)).toBe(200)
  const response = await fetch(server.url + body.url)
  await response.arrayBuffer()
  expect(response.status).toBe(200)
  return response.headers.get("content-type")
}

const submitted = async (name: string, bytes: Uint8Array, type: string, keyless = false) =>
  accepted(await submitFile(server, { key: keyless ? undefined : key, file: { name, bytes, type } }))

describe("the type of the signed audio link", () => {
  it("is the recording's own for multipart files declared as application/octet-stream", async () => {
    const cases: ReadonlyArray<readonly [string, Uint8Array, string]> = [
      ["talk.wav", wav, "audio/wav"],
      ["clip.mp4", mp4Bytes(), "video/mp4"],
      ["voice.m4a", m4aBytes(), "audio/mp4"],
      ["note.opus", opusBytes(), "audio/ogg"],
      ["screen.webm", webmBytes(), "video/webm"],
      // Same container as video/webm: the name says there is no picture.
      ["voice.weba", webmBytes(), "audio/webm"]
    ]
    for (const [name, bytes, expected] of cases) {
      const { job_id } = await submitted(name, bytes, "application/octet-stream")
      expect(await served(job_id), name).toBe(expected)
    }
  })

  it("follows the bytes over a wrong name or declared type", async () => {
    const { job_id } = await submitted("mislabelled.mp3", wav, "audio/mpeg")
    expect(await served(job_id)).toBe("audio/wav")
  })

  it("is sniffed for keyless samples (read with their claim token)", async () => {
    const sample = await submitted("sample.mp4", mp4Bytes(), "application/octet-stream", true)
    expect(sample.claim_token).toEqual(expect.any(String))
    expect(await served(sample.job_id, sample.claim_token)).toBe("video/mp4")
  })

  it("is sniffed for direct uploads (typed client, which declares application/octet-stream)", async () => {
    const client = createClient({ baseUrl: server.url, apiKey: key })
    const { job_id } = await client.uploadDirect({ bytes: m4aBytes(), filename: "memo.m4a" })
    const link = await client.audioUrl(job_id)
    expect(link.storage).toBe("signed")
    // The helper puts the signed path on the API root it uses.
    expect(link.url.startsWith(`${server.url}/v1/jobs/${job_id}/audio?token=`)).toBe(true)
    const response = await fetch(link.url)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("audio/mp4")
    expect((await response.arrayBuffer()).byteLength).toBe(m4aBytes().length)
  })

  it("is sniffed for fetched links whose server sends application/octet-stream", async () => {
    const { job_id } = await accepted(await submitUrl(server, key, { url: `${links.origin}/media/episode.wav` }))
    expect((await waitForJob(server, key, job_id)).status).toBe("done")
    expect(await served(job_id)).toBe("audio/wav")
  })

  it("is sniffed on the first play of a row stored before the column existed, and remembered", async () => {
    const { job_id } = await submitted("older.mp3", wav, "application/octet-stream")
    const column = (id: string) =>
      server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ media_type: string | null }>`SELECT media_type FROM jobs WHERE id = ${id}`
        return rows[0]?.media_type
      }).pipe(Effect.orDie))
    await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE jobs SET media_type = NULL WHERE id = ${job_id}`
    }).pipe(Effect.orDie))
    expect(await column(job_id)).toBeNull()
    // The bytes are a WAV; the name (and nothing else) would say mp3.
    expect(await served(job_id)).toBe("audio/wav")
    expect(await column(job_id)).toBe("audio/wav")
  })
})
