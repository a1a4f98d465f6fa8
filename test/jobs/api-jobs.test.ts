/**
 * Reading jobs over real sockets: every Job field in each status, the queue position of a
 * job waiting behind others (one worker, a slow stand-in run), progress rising while
 * processing, strong ETags with 304, BAD_ID, another account's job answering 404 on every
 * job endpoint, the job list (newest first, paging, status filter, validation, scoping) and
 * the batch status call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  accepted,
  expectError,
  expectJobShape,
  getJob,
  type Job,
  listJobs,
  postJson,
  request,
  sleep,
  submitFile,
  waitForJob
} from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, type StandInDirective, tinyWav } from "../support/standInPipeline.ts"

let server: TestServer
let key: string
const standIn = makeStandIn({ delayMs: 100, steps: 1 })

beforeAll(async () => {
  server = await startServer("api-jobs", { rateLimitPerMinute: 10_000, workers: 1 }, { pipeline: standIn.layer })
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
})

const submit = async (accountKey: string, name = "clip.wav", directive?: StandInDirective) =>
  (await accepted(await submitFile(server, { key: accountKey, file: { name, bytes: tinyWav(directive) } }))).job_id

describe("GET /v1/jobs/{job_id}", () => {
  it("shows a job queued behind others with queue_position > 0, progress rising while processing, completed_at once done", async () => {
    const slow = await submit(key, "slow.wav", { delayMs: 4_000, steps: 16 })
    await waitForJob(server, key, slow, (job) => job.status === "processing", { timeoutMs: 10_000, intervalMs: 30 })
    const second = await submit(key, "second.wav")
    const third = await submit(key, "third.wav")

    const queued = await getJob(server, key, third)
    expectJobShape(queued)
    expect(queued).toMatchObject({
      status: "queued",
      progress: 0,
      filename: "third.wav",
      completed_at: null,
      error: null,
      speech_detected: false
    })
    expect(queued.queue_position).toBeGreaterThanOrEqual(1)
    expect(queued.queue_position).toBe((await getJob(server, key, second)).queue_position + 1)
    // The list gives each queued job the same position as its own GET (one query for the page).
    const listed = (await listJobs(server, key, "?status=queued")).jobs
    const queuedNow = [await getJob(server, key, third), await getJob(server, key, second)]
    expect(listed.filter((job) => job.job_id === third || job.job_id === second).map((job) => [job.job_id, job.queue_position]))
      .toEqual(queuedNow.filter((job) => job.status === "queued").map((job) => [job.job_id, job.queue_position]))

    // Progress of the processing job, sampled until it ends: it rises and stays below 100.
    const seen: Array<number> = []
    let job: Job = await getJob(server, key, slow)
    const deadline = Date.now() + 15_000
    while (job.status === "processing" && Date.now() < deadline) {
      expectJobShape(job)
      expect(job.queue_position).toBe(0)
      seen.push(job.progress)
      await sleep(150)
      job = await getJob(server, key, slow)
    }
    expect(job.status).toBe("done")
    expect(seen.length).toBeGreaterThan(3)
    expect(Math.max(...seen)).toBeGreaterThan(Math.min(...seen))
    expect(Math.max(...seen)).toBeLessThan(100)
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThanOrEqual(seen[i - 1]!)

    expectJobShape(job)
    expect(job.progress).toBe(100)
    expect(job.completed_at).not.toBeNull()
    expect(job.completed_at! - job.created_at).toBeGreaterThanOrEqual(2)
    expect(job.completed_at!).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000))

    for (const id of [second, third]) {
      const finished = await waitForJob(server, key, id)
      expect(finished).toMatchObject({ status: "done", queue_position: 0 })
    }
  })

  it("sends a strong ETag, answers 304 to If-None-Match while unchanged and a new ETag after a change", async () => {
    const id = await submit(key, "etag.wav", { delayMs: 1_200, steps: 4 })
    const first = await request(server, "GET", `/v1/jobs/${id}`, key)
    expect(first.status).toBe(200)
    const etag = first.headers.get("etag")!
    expect(etag).toMatch(/^"[^"]+"$/)
    const firstBody = await first.json() as Job

    // Unchanged (still queued or at the same progress): 304 without a body.
    const unchanged = await request(server, "GET", `/v1/jobs/${id}`, key, { "If-None-Match": etag })
    if (unchanged.status === 304) {
      expect(unchanged.headers.get("etag")).toBe(etag)
      expect(await unchanged.text()).toBe("")
    } else {
      // The job moved between the two reads; the answer must then carry the new state.
      expect(unchanged.status).toBe(200)
      expect(unchanged.headers.get("etag")).not.toBe(etag)
    }

    const done = await waitForJob(server, key, id)
    expect(done.status).not.toBe(firstBody.status)
    const changed = await request(server, "GET", `/v1/jobs/${id}`, key, { "If-None-Match": etag })
    expect(changed.status).toBe(200)
    const doneTag = changed.headers.get("etag")!
    expect(doneTag).not.toBe(etag)
    expect(((await changed.json()) as Job).status).toBe("done")

    // A finished job keeps its validator; a list of tags matches any member.
    const cached = await request(server, "GET", `/v1/jobs/${id}`, key, { "If-None-Match": `"other", ${doneTag}` })
    expect(cached.status).toBe(304)
    expect(cached.headers.get("etag")).toBe(doneTag)
    expect((await request(server, "GET", `/v1/jobs/${id}`, key, { "If-None-Match": `W/${doneTag}` })).status).toBe(200)
  })

  it("answers 400 BAD_ID for a non-UUID id on every job endpoint", async () => {
    await expectError(await request(server, "GET", "/v1/jobs/not-a-uuid", key), 400, "BAD_ID")
    await expectError(await request(server, "DELETE", "/v1/jobs/not-a-uuid", key), 400, "BAD_ID")
    await expectError(await request(server, "GET", "/v1/jobs/not-a-uuid/result", key), 400, "BAD_ID")
    await expectError(await request(server, "POST", "/v1/jobs/not-a-uuid/restore", key), 400, "BAD_ID")
    const patch = await fetch(`${server.url}/v1/jobs/not-a-uuid/transcript`, {
      method: "PATCH",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ segments: [{ index: 0, text: "x" }] })
    })
    await expectError(patch, 400, "BAD_ID")
  })

  it("answers 404 NOT_FOUND for another account's job on every job endpoint and leaves the job alone", async () => {
    const mine = await submit(key, "private.wav")
    await waitForJob(server, key, mine)
    const stranger = (await server.account()).key
    const unknown = crypto.randomUUID()

    for (const id of [mine, unknown]) {
      await expectError(await request(server, "GET", `/v1/jobs/${id}`, stranger), 404, "NOT_FOUND")
      await expectError(await request(server, "GET", `/v1/jobs/${id}/result`, stranger), 404, "NOT_FOUND")
      await expectError(await request(server, "GET", `/v1/jobs/${id}/result?format=srt`, stranger), 404, "NOT_FOUND")
      await expectError(await request(server, "DELETE", `/v1/jobs/${id}`, stranger), 404, "NOT_FOUND")
      await expectError(await request(server, "POST", `/v1/jobs/${id}/restore`, stranger), 404, "NOT_FOUND")
      const patch = await fetch(`${server.url}/v1/jobs/${id}/transcript`, {
        method: "PATCH",
        headers: { "X-API-Key": stranger, "Content-Type": "application/json" },
        body: JSON.stringify({ segments: [{ index: 0, text: "hijacked" }] })
      })
      await expectError(patch, 404, "NOT_FOUND")
    }
    const batch = await postJson(server, "/v1/jobs/status", { ids: [mine, unknown] }, stranger)
    expect(batch.status).toBe(200)
    expect(await batch.json()).toEqual({ jobs: [], not_found: [mine, unknown] })

    // Deleted by its owner, the job is still not restorable by the stranger.
    expect((await request(server, "DELETE", `/v1/jobs/${mine}`, key)).status).toBe(204)
    await expectError(await request(server, "POST", `/v1/jobs/${mine}/restore`, stranger), 404, "NOT_FOUND")
    expect((await request(server, "POST", `/v1/jobs/${mine}/restore`, key)).status).toBe(200)

    const still = await getJob(server, key, mine)
    expect(still.status).toBe("done")
    const result = await (await request(server, "GET", `/v1/jobs/${mine}/result`, key)).json() as { text: string }
    expect(result.text).not.toContain("hijacked")
  })
})

describe("GET /v1/jobs", () => {
  let lister: string
  const ids: Array<string> = []

  beforeAll(async () => {
    lister = (await server.account()).key
    for (let i = 0; i < 5; i++) {
      ids.push(await submit(lister, `list-${i}.wav`, i === 2 ? { fail: "noaudio", delayMs: 10 } : { delayMs: 10 }))
      await sleep(15)
    }
    for (const id of ids) await waitForJob(server, lister, id)
  })

  it("lists the caller's jobs newest first with limit, offset, count and total", async () => {
    const all = await listJobs(server, lister)
    expect(all).toMatchObject({ limit: 20, offset: 0, count: 5, total: 5 })
    expect(all.jobs.map((job) => job.job_id)).toEqual([...ids].reverse())
    for (const job of all.jobs) expectJobShape(job)
    for (let i = 1; i < all.jobs.length; i++) expect(all.jobs[i - 1]!.created_at).toBeGreaterThanOrEqual(all.jobs[i]!.created_at)

    const page = await listJobs(server, lister, "?limit=2&offset=1")
    expect(page).toMatchObject({ limit: 2, offset: 1, count: 2, total: 5 })
    expect(page.jobs.map((job) => job.job_id)).toEqual([ids[3], ids[2]])

    const beyond = await listJobs(server, lister, "?offset=10")
    expect(beyond).toMatchObject({ count: 0, total: 5, jobs: [] })
  })

  it("filters by status", async () => {
    const failed = await listJobs(server, lister, "?status=failed")
    expect(failed).toMatchObject({ count: 1, total: 1 })
    expect(failed.jobs[0]).toMatchObject({ job_id: ids[2], status: "failed", error_code: "NO_AUDIO" })
    const done = await listJobs(server, lister, "?status=done")
    expect(done.total).toBe(4)
    expect(done.jobs.every((job) => job.status === "done")).toBe(true)
    expect((await listJobs(server, lister, "?status=processing")).total).toBe(0)
    await expectError(await request(server, "GET", "/v1/jobs?status=finished", lister), 422, "VALIDATION_FAILED")
  })

  it("refuses limit 0 or 101 and a negative offset with 422", async () => {
    for (const query of ["?limit=0", "?limit=101", "?offset=-1", "?limit=ten"]) {
      const body = await expectError(await request(server, "GET", `/v1/jobs${query}`, lister), 422, "VALIDATION_FAILED")
      expect((body["detail"] as Array<{ loc: Array<string> }>)[0]!.loc[0]).toBe("query")
    }
    expect((await listJobs(server, lister, "?limit=100")).limit).toBe(100)
    expect((await listJobs(server, lister, "?limit=1")).count).toBe(1)
  })

  it("shows only the caller's jobs, and needs a key", async () => {
    const fresh = (await server.account()).key
    expect(await listJobs(server, fresh)).toMatchObject({ jobs: [], count: 0, total: 0 })
    const mine = await listJobs(server, key, "?limit=100")
    expect(mine.jobs.some((job) => ids.includes(job.job_id))).toBe(false)
    await expectError(await request(server, "GET", "/v1/jobs"), 401, "MISSING_API_KEY")
  })
})

describe("POST /v1/jobs/status", () => {
  it("answers the status of up to 50 ids and lists the rest as not_found", async () => {
    const lister = (await server.account()).key
    const done = await submit(lister, "b1.wav", { delayMs: 10 })
    const failed = await submit(lister, "b2.wav", { fail: "error", delayMs: 10 })
    await waitForJob(server, lister, done)
    await waitForJob(server, lister, failed)
    const unknown = Array.from({ length: 48 }, () => crypto.randomUUID())
    const response = await postJson(server, "/v1/jobs/status", { ids: [done, failed, ...unknown] }, lister)
    expect(response.status).toBe(200)
    const body = await response.json() as { jobs: Array<Record<string, unknown>>; not_found: Array<string> }
    expect(body.jobs).toHaveLength(2)
    expect(body.jobs).toEqual(expect.arrayContaining([
      { job_id: done, status: "done", progress: 100, locked: false },
      { job_id: failed, status: "failed", progress: expect.any(Number), locked: false, error_code: "SERVICE_ERROR" }
    ]))
    expect(body.not_found.sort()).toEqual([...unknown].sort())
  })

  it("refuses 51 ids, none, or a non-UUID with 422", async () => {
    const ids = Array.from({ length: 51 }, () => crypto.randomUUID())
    await expectError(await postJson(server, "/v1/jobs/status", { ids }, key), 422, "VALIDATION_FAILED")
    await expectError(await postJson(server, "/v1/jobs/status", { ids: [] }, key), 422, "VALIDATION_FAILED")
    await expectError(await postJson(server, "/v1/jobs/status", { ids: ["not-a-uuid"] }, key), 422, "VALIDATION_FAILED")
    await expectError(await postJson(server, "/v1/jobs/status", { ids: [crypto.randomUUID()] }), 401, "MISSING_API_KEY")
  })
})
