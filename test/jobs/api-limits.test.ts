/**
 * Idempotency, the plan's concurrency cap and keyless samples over real sockets:
 * - `Idempotency-Key`: a replay answers 200 with `X-Idempotent-Replay: true` and the
 *   original job; 20 concurrent submits with one key make exactly one job; malformed keys
 *   are 400; keys are scoped per API key;
 * - the standard plan runs 5 recordings at once: the 6th submit is 429 CONCURRENCY_LIMIT
 *   with `limit`, `running`, `retry_after` and `Retry-After`;
 * - without a key, 3 samples a day, each owned through its claim token.
 * The pipeline is the stand-in; slow runs keep jobs queued or processing on purpose.
 */
import { Effect, Exit, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApiKeys } from "../../services/ApiKeys.ts"
import { respond, startTestServer, type TestServer as LinkServer } from "../support/linkTestServer.ts"
import {
  accepted,
  expectError,
  getJob,
  listJobs,
  postJson,
  request,
  type SubmitAnswer,
  submitFile,
  submitUrl,
  waitForJob
} from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, type StandInDirective, tinyWav } from "../support/standInPipeline.ts"

let server: TestServer
let links: LinkServer
const linkScope = Effect.runSync(Scope.make())
const standIn = makeStandIn({ delayMs: 50, steps: 1 })

beforeAll(async () => {
  links = await Effect.runPromise(Scope.provide(linkScope)(startTestServer({
    "/episode.wav": respond(200, { "content-type": "audio/wav" }, tinyWav())
  })))
  server = await startServer(
    "api-limits",
    // trustProxy: keyless callers are told apart by X-Forwarded-For, as behind a proxy.
    { rateLimitPerMinute: 10_000, workers: 1, fetchAllow: [`127.0.0.1:${links.port}`], trustProxy: true },
    { pipeline: standIn.layer }
  )
})
afterAll(async () => {
  await server?.close()
  await Effect.runPromise(Scope.close(linkScope, Exit.void))
})

const upload = (key: string | undefined, headers: Record<string, string> = {}, directive?: StandInDirective) =>
  submitFile(server, { key, file: { name: "sample.wav", bytes: tinyWav(directive) }, headers })

const storedOriginals = () => {
  const root = path.join(server.storage.dataDir, "media", "jobs")
  return fs.existsSync(root) ? fs.readdirSync(root) : []
}

describe("Idempotency-Key", () => {
  it("replays a multipart submit: 200, X-Idempotent-Replay: true, the same job, no new job", async () => {
    const { key } = await server.account()
    const first = await accepted(await upload(key, { "Idempotency-Key": "upload-2024/05:a_b.c-1" }))
    await waitForJob(server, key, first.job_id)
    const files = storedOriginals().length
    const replay = await upload(key, { "Idempotency-Key": "upload-2024/05:a_b.c-1" })
    expect(replay.status).toBe(200)
    expect(replay.headers.get("x-idempotent-replay")).toBe("true")
    expect(await replay.json()).toEqual({ job_id: first.job_id, status: "done" })
    expect((await listJobs(server, key)).total).toBe(1)
    expect(storedOriginals().length).toBe(files)
  })

  it("replays a link submit the same way, and a refused first attempt reserves nothing", async () => {
    const { key } = await server.account()
    const refused = await submitUrl(server, key, { url: "http://192.168.0.1/a.mp3" }, { "Idempotency-Key": "link-1" })
    expect(refused.status).toBe(400)
    expect((await listJobs(server, key)).total).toBe(0)
    const first = await accepted(await submitUrl(server, key, { url: `${links.origin}/episode.wav` }, { "Idempotency-Key": "link-1" }))
    const replay = await submitUrl(server, key, { url: `${links.origin}/episode.wav` }, { "Idempotency-Key": "link-1" })
    expect(replay.status).toBe(200)
    expect(replay.headers.get("x-idempotent-replay")).toBe("true")
    expect(((await replay.json()) as SubmitAnswer).job_id).toBe(first.job_id)
    expect((await listJobs(server, key)).total).toBe(1)
    await waitForJob(server, key, first.job_id)
  })

  it("makes exactly one job of 20 concurrent submits with one key", async () => {
    const { key } = await server.account()
    const before = new Set(storedOriginals())
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        upload(key, { "Idempotency-Key": "burst-key-1" }).then(async (response) => ({
          status: response.status,
          replay: response.headers.get("x-idempotent-replay"),
          body: await response.json() as SubmitAnswer
        })))
    )
    const ids = new Set(answers.map((answer) => answer.body.job_id))
    expect(ids.size, JSON.stringify(answers)).toBe(1)
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(1)
    expect(answers.filter((answer) => answer.status === 200 && answer.replay === "true")).toHaveLength(19)
    expect((await listJobs(server, key)).total).toBe(1)
    const [id] = [...ids]
    await waitForJob(server, key, id!)
    // The 19 replays kept none of the files they had stored.
    expect(storedOriginals().filter((name) => !before.has(name))).toEqual([id])
  })

  it("refuses a malformed key with 400 BAD_IDEMPOTENCY_KEY and accepts 255 characters", async () => {
    const { key } = await server.account()
    await expectError(await upload(key, { "Idempotency-Key": "has space" }), 400, "BAD_IDEMPOTENCY_KEY")
    await expectError(await upload(key, { "Idempotency-Key": "k".repeat(256) }), 400, "BAD_IDEMPOTENCY_KEY")
    await expectError(await upload(key, { "Idempotency-Key": "semi;colon" }), 400, "BAD_IDEMPOTENCY_KEY")
    await expectError(
      await submitUrl(server, key, { url: "https://example.com/a.mp3" }, { "Idempotency-Key": "ü-umlaut" }),
      400,
      "BAD_IDEMPOTENCY_KEY"
    )
    expect((await listJobs(server, key)).total).toBe(0)
    const long = await accepted(await upload(key, { "Idempotency-Key": "k".repeat(255) }))
    await waitForJob(server, key, long.job_id)
  })

  it("scopes keys per API key: the same key on another key of the account makes another job", async () => {
    const owner = await server.account()
    const second = await server.run(Effect.gen(function*() {
      return yield* (yield* ApiKeys).create(owner.accountId, "second")
    }))
    const a = await accepted(await upload(owner.key, { "Idempotency-Key": "shared-key" }))
    const b = await accepted(await upload(second.key, { "Idempotency-Key": "shared-key" }))
    expect(b.job_id).not.toBe(a.job_id)
    const other = await server.account()
    const c = await accepted(await upload(other.key, { "Idempotency-Key": "shared-key" }))
    expect(new Set([a.job_id, b.job_id, c.job_id]).size).toBe(3)
    expect((await listJobs(server, owner.key)).total).toBe(2)
    // Each key still replays its own.
    const replay = await upload(second.key, { "Idempotency-Key": "shared-key" })
    expect(replay.status).toBe(200)
    expect(((await replay.json()) as SubmitAnswer).job_id).toBe(b.job_id)
    for (const id of [a.job_id, b.job_id]) await waitForJob(server, owner.key, id)
    await waitForJob(server, other.key, c.job_id)
  })
})

describe("concurrency cap", () => {
  it("answers the 6th concurrent submit on the standard plan with 429 CONCURRENCY_LIMIT", async () => {
    const { key } = await server.account()
    const running: Array<string> = []
    try {
      for (let i = 0; i < 5; i++) {
        const headers = i === 0 ? { "Idempotency-Key": "capped-1" } : {}
        // Far longer than the test: none of them may end while it runs (they are deleted at the end).
        running.push((await accepted(await upload(key, headers, { delayMs: 60_000, steps: 300 }))).job_id)
      }
      const refused = await upload(key)
      const body = await expectError(refused, 429, "CONCURRENCY_LIMIT")
      expect(body).toMatchObject({ limit: 5, running: 5 })
      expect(Number.isInteger(body["retry_after"])).toBe(true)
      expect(body["retry_after"] as number).toBeGreaterThan(0)
      expect(refused.headers.get("retry-after")).toBe(String(body["retry_after"]))
      expect((await listJobs(server, key)).total).toBe(5)
      // The link path counts the same jobs.
      await expectError(await submitUrl(server, key, { url: `${links.origin}/episode.wav` }), 429, "CONCURRENCY_LIMIT")
      // So does a direct-upload commit, which can be retried with the same upload later (rule 6).
      const bytes = tinyWav()
      const ticketResponse = await postJson(server, "/v1/uploads/init", { filename: "later.wav", size_bytes: bytes.length }, key)
      const ticket = await ticketResponse.json() as {
        job_id: string
        object_key: string
        upload_url: string
        method: string
        headers: Record<string, string>
        options: unknown
      }
      expect(ticketResponse.status).toBe(200)
      const put = await fetch(ticket.upload_url, { method: ticket.method, headers: ticket.headers, body: bytes as Uint8Array<ArrayBuffer> })
      expect(put.status).toBe(200)
      const commit = () =>
        postJson(server, `/v1/uploads/${ticket.job_id}/commit`, { object_key: ticket.object_key, options: ticket.options }, key)
      const capped = await commit()
      await expectError(capped, 429, "CONCURRENCY_LIMIT")
      expect(Number(capped.headers.get("retry-after"))).toBeGreaterThan(0)
      // A replay is not a new recording: it still answers.
      const replay = await upload(key, { "Idempotency-Key": "capped-1" })
      expect(replay.status).toBe(200)
      expect((await listJobs(server, key)).total).toBe(5)

      // Cancelling one frees a place for the same upload's commit.
      expect((await request(server, "DELETE", `/v1/jobs/${running.pop()}`, key)).status).toBe(204)
      const committed = await commit()
      running.push(ticket.job_id)
      expect(committed.status).toBe(202)
      expect(((await committed.json()) as SubmitAnswer).job_id).toBe(ticket.job_id)
      await expectError(await upload(key), 429, "CONCURRENCY_LIMIT")
    } finally {
      // Slow runs left behind would hold the single worker for the tests after this one.
      for (const id of running) await request(server, "DELETE", `/v1/jobs/${id}`, key)
    }
    expect((await listJobs(server, key)).total).toBe(0)
  })
})

describe("concurrency cap under concurrent submits", () => {
  it("admits exactly 5 of 10 simultaneous submits of one standard account", async () => {
    const { key } = await server.account()
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        upload(key, {}, { delayMs: 60_000, steps: 300 }).then(async (response) => ({ status: response.status, body: await response.json() as SubmitAnswer & { code?: string } })))
    )
    try {
      expect(answers.filter((answer) => answer.status === 202)).toHaveLength(5)
      const refused = answers.filter((answer) => answer.status === 429)
      expect(refused).toHaveLength(5)
      for (const answer of refused) expect(answer.body.code).toBe("CONCURRENCY_LIMIT")
      expect((await listJobs(server, key)).total).toBe(5)
    } finally {
      for (const answer of answers) {
        if (answer.status === 202) await request(server, "DELETE", `/v1/jobs/${answer.body.job_id}`, key)
      }
    }
  })
})

describe("keyless samples", () => {
  it("replays a keyless submit with its Idempotency-Key without using up the daily samples", async () => {
    const client = { "X-Forwarded-For": "203.0.113.77" }
    const first = await accepted(await upload(undefined, { ...client, "Idempotency-Key": "guest-retry-1" }))
    expect(first.claim_token).toEqual(expect.any(String))
    for (let retry = 0; retry < 3; retry++) {
      const replay = await upload(undefined, { ...client, "Idempotency-Key": "guest-retry-1" })
      expect(replay.status, `replay ${retry + 1}: ${await replay.clone().text()}`).toBe(200)
      expect(replay.headers.get("x-idempotent-replay")).toBe("true")
      expect(((await replay.json()) as SubmitAnswer).job_id).toBe(first.job_id)
    }
    // One sample used so far: two more are allowed today.
    await accepted(await upload(undefined, client))
    await accepted(await upload(undefined, client))
    await expectError(await upload(undefined, client), 429, "QUOTA_EXCEEDED")
  })

  it("allows 3 samples a day with claim tokens, then 429 QUOTA_EXCEEDED with Retry-After", async () => {
    const answers: Array<SubmitAnswer> = []
    // Without X-Forwarded-For the client is its socket address, 127.0.0.1.
    for (let i = 0; i < 3; i++) {
      const answer = await accepted(await upload(undefined))
      expect(answer.claim_token).toEqual(expect.any(String))
      expect(answer.claim_token!.length).toBeGreaterThan(16)
      answers.push(answer)
    }
    expect(new Set(answers.map((a) => a.claim_token)).size).toBe(3)
    const before = new Set(storedOriginals())
    const fourth = await upload(undefined)
    const body = await expectError(fourth, 429, "QUOTA_EXCEEDED")
    const retryAfter = Number(fourth.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(24 * 3600)
    expect(body["retry_after"]).toBe(retryAfter)
    expect(storedOriginals().filter((name) => !before.has(name))).toEqual([])

    const [first, second] = answers
    // Reading needs the job's own claim token.
    await expectError(await request(server, "GET", `/v1/jobs/${first!.job_id}`), 401, "MISSING_API_KEY")
    await expectError(
      await request(server, "GET", `/v1/jobs/${first!.job_id}`, undefined, { "X-Claim-Token": second!.claim_token! }),
      401,
      "INVALID_API_KEY"
    )
    await expectError(
      await request(server, "GET", `/v1/jobs/${first!.job_id}`, undefined, { "X-Claim-Token": "not-the-token" }),
      401,
      "INVALID_API_KEY"
    )
    const job = await waitForJob(server, undefined, first!.job_id, undefined, { headers: { "X-Claim-Token": first!.claim_token! } })
    expect(job).toMatchObject({ job_id: first!.job_id, status: "done", preview: true })
    const result = await request(server, "GET", `/v1/jobs/${first!.job_id}/result`, undefined, { "X-Claim-Token": first!.claim_token! })
    expect(result.status).toBe(200)

    // An account's key does not reach a sample, and a sample's token does not reach an account's job.
    const { key } = await server.account()
    await expectError(await request(server, "GET", `/v1/jobs/${first!.job_id}`, key), 404, "NOT_FOUND")
    const owned = await accepted(await upload(key))
    await expectError(
      await request(server, "GET", `/v1/jobs/${owned.job_id}`, undefined, { "X-Claim-Token": first!.claim_token! }),
      401,
      "MISSING_API_KEY"
    )
    expect((await getJob(server, key, owned.job_id)).preview).toBeUndefined()
    await expectError(await request(server, "GET", "/v1/jobs"), 401, "MISSING_API_KEY")
  })
})
