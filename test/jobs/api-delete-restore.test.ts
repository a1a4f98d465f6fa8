/**
 * `DELETE /v1/jobs/{id}` and `POST /v1/jobs/{id}/restore` over real sockets (spec, rule 7):
 * a queued job is cancelled and never runs; a processing job's run is stopped at its next
 * heartbeat and does not end done; a finished job disappears; within 24 hours a restore
 * brings a finished job back as it was and puts a cancelled one back in the queue, where
 * it completes. After 24 hours the watchdog's sweep (run here with a clock moved 25 hours
 * ahead) purges the job and its stored file, and restore answers 404. `GET /v1/jobs?status=deleted`
 * lists the caller's restorable deleted jobs (never another account's, never past the window
 * or purged), with `deleted_at` and `restorable_until`, through HTTP and the typed client.
 */
import { Effect, Option } from "effect"
import { FetchHttpClient } from "effect/http"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createClient, makeClient } from "verbatim/client"
import { JobStore } from "../../services/jobs/JobStore.ts"
import { TranscriptStore } from "../../services/jobs/TranscriptStore.ts"
import { sweep } from "../../services/jobs/JobWatchdog.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import { controlledClock } from "../support/clock.ts"
import {
  accepted,
  eventually,
  expectError,
  getJob,
  type Job,
  listJobs,
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
  server = await startServer("api-delete", { rateLimitPerMinute: 10_000, workers: 1 }, { pipeline: standIn.layer })
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
})

const submit = async (name: string, directive?: StandInDirective) =>
  (await accepted(await submitFile(server, { key, file: { name, bytes: tinyWav(directive) } }))).job_id

const remove = (id: string) => request(server, "DELETE", `/v1/jobs/${id}`, key)
const restore = (id: string) => request(server, "POST", `/v1/jobs/${id}/restore`, key)

/** The row as stored, deleted or not (None once purged). */
const row = (id: string) => server.run(Effect.gen(function*() {
  return yield* (yield* JobStore).getAny(JobId.make(id))
}))

const storedOriginal = (id: string) => path.join(server.storage.dataDir, "media", "jobs", id, "original.wav")

describe("DELETE /v1/jobs/{job_id}", () => {
  let cancelled: string
  let interrupted: string

  it("cancels a queued job: 204, 404 afterwards, and it never runs", async () => {
    const blocker = await submit("blocker.wav", { delayMs: 3_000, steps: 12 })
    await waitForJob(server, key, blocker, (job) => job.status === "processing", { intervalMs: 30 })
    cancelled = await submit("queued.wav")
    expect((await getJob(server, key, cancelled)).status).toBe("queued")

    const response = await remove(cancelled)
    expect(response.status).toBe(204)
    expect(await response.text()).toBe("")
    await expectError(await request(server, "GET", `/v1/jobs/${cancelled}`, key), 404, "NOT_FOUND")
    await expectError(await remove(cancelled), 404, "NOT_FOUND")
    expect((await listJobs(server, key, "?limit=100")).jobs.map((job) => job.job_id)).not.toContain(cancelled)

    await waitForJob(server, key, blocker)
    // Time for the runner to have picked it up, had it still been in the queue.
    await sleep(700)
    expect(standIn.runs.get(cancelled)).toBeUndefined()
    const stored = await row(cancelled)
    expect(Option.getOrThrow(stored).status).toBe("queued")
  })

  it("stops a processing job at its next heartbeat; it does not end done", async () => {
    interrupted = await submit("long.wav", { delayMs: 4_000, steps: 20 })
    await waitForJob(server, key, interrupted, (job) => job.status === "processing" && job.progress > 0, { intervalMs: 30 })
    expect((await remove(interrupted)).status).toBe(204)
    await expectError(await request(server, "GET", `/v1/jobs/${interrupted}`, key), 404, "NOT_FOUND")

    const events = await eventually(
      async () => {
        const list = standIn.runs.get(interrupted) ?? []
        return list.length >= 2 ? list : undefined
      },
      "the deleted job's run to stop",
      3_000
    )
    expect(events).toEqual(["started", "interrupted"])
    await sleep(300)
    const stored = Option.getOrThrow(await row(interrupted))
    expect(stored.status).not.toBe("done")
    expect(stored.deleted_at).not.toBeNull()
    const transcript = await server.run(Effect.gen(function*() {
      return yield* (yield* TranscriptStore).get(JobId.make(interrupted))
    }))
    expect(Option.isNone(transcript)).toBe(true)
  })

  it("removes a finished job: 204, then 404 on the job and its result", async () => {
    const id = await submit("finished.wav")
    await waitForJob(server, key, id)
    expect((await remove(id)).status).toBe(204)
    await expectError(await request(server, "GET", `/v1/jobs/${id}`, key), 404, "NOT_FOUND")
    await expectError(await request(server, "GET", `/v1/jobs/${id}/result`, key), 404, "NOT_FOUND")
    await expectError(await request(server, "GET", `/v1/jobs/${id}/result?format=txt`, key), 404, "NOT_FOUND")
  })

  describe("restore within 24 hours", () => {
    it("brings a finished job back as it was", async () => {
      const id = await submit("kept.wav")
      const before = await waitForJob(server, key, id)
      expect((await remove(id)).status).toBe(204)
      const response = await restore(id)
      const restored = await response.json() as Job
      expect(response.status, JSON.stringify(restored)).toBe(200)
      expect(restored).toEqual(before)
      expect(await getJob(server, key, id)).toEqual(before)
      expect((await request(server, "GET", `/v1/jobs/${id}/result`, key)).status).toBe(200)
      // Restored once; a second restore finds nothing deleted.
      await expectError(await restore(id), 404, "NOT_FOUND")
    })

    it("puts a cancelled queued job back in the queue, where it completes", async () => {
      const response = await restore(cancelled)
      const restored = await response.json() as Job
      expect(response.status, JSON.stringify(restored)).toBe(200)
      expect(restored).toMatchObject({ job_id: cancelled, status: "queued", progress: 0, completed_at: null })
      const done = await waitForJob(server, key, cancelled)
      expect(done.status).toBe("done")
      expect(standIn.runs.get(cancelled)).toEqual(["started", "done"])
    })

    it("puts an interrupted processing job back in the queue, where it completes", async () => {
      const response = await restore(interrupted)
      expect(response.status).toBe(200)
      expect(((await response.json()) as Job).status).toBe("queued")
      const done = await waitForJob(server, key, interrupted, undefined, { timeoutMs: 15_000 })
      expect(done.status).toBe("done")
      expect(standIn.runs.get(interrupted)).toEqual(["started", "interrupted", "started", "done"])
    })

    it("answers 404 for an unknown job", async () => {
      await expectError(await restore(crypto.randomUUID()), 404, "NOT_FOUND")
    })
  })

  it("purges a job deleted more than 24 hours ago with its file; restore then answers 404", async () => {
    const id = await submit("purged.wav")
    await waitForJob(server, key, id)
    const kept = await submit("survivor.wav")
    await waitForJob(server, key, kept)
    expect(fs.existsSync(storedOriginal(id))).toBe(true)
    expect((await remove(id)).status).toBe(204)
    // Deleted but restorable: the file stays for the restore window.
    expect(fs.existsSync(storedOriginal(id))).toBe(true)

    // No job may be processing now: the sweep at +25 h would also end it as stalled.
    expect((await listJobs(server, key, "?status=processing")).total).toBe(0)
    const clock = controlledClock(Date.now())
    const early = await server.run(clock.at(sweep))
    expect(Option.isSome(await row(id))).toBe(true)
    expect(early.purged).toBe(0)

    clock.advance("25 hours")
    const late = await server.run(clock.at(sweep))
    expect(late.purged).toBeGreaterThanOrEqual(1)
    expect(Option.isNone(await row(id))).toBe(true)
    expect(fs.existsSync(storedOriginal(id))).toBe(false)
    expect(fs.existsSync(path.dirname(storedOriginal(id)))).toBe(false)
    await expectError(await restore(id), 404, "NOT_FOUND")
    await expectError(await request(server, "GET", `/v1/jobs/${id}`, key), 404, "NOT_FOUND")

    // A job that was never deleted is untouched by the purge.
    expect(await getJob(server, key, kept)).toMatchObject({ status: "done" })
    expect(fs.existsSync(storedOriginal(kept))).toBe(true)
  })

  it("keeps an Idempotency-Key working after the job it named was purged: one new job, then replays", async () => {
    const headers = { "Idempotency-Key": "purged-key-1" }
    const first = await accepted(await submitFile(server, { key, file: { name: "idem.wav", bytes: tinyWav() }, headers }))
    await waitForJob(server, key, first.job_id)
    expect((await remove(first.job_id)).status).toBe(204)
    expect((await listJobs(server, key, "?status=processing")).total).toBe(0)
    const clock = controlledClock(Date.now())
    clock.advance("25 hours")
    await server.run(clock.at(sweep))
    expect(Option.isNone(await row(first.job_id))).toBe(true)

    const totalBefore = (await listJobs(server, key)).total!
    const again = await submitFile(server, { key, file: { name: "idem.wav", bytes: tinyWav() }, headers })
    expect([200, 202]).toContain(again.status)
    const second = await again.json() as { job_id: string }
    const third = await submitFile(server, { key, file: { name: "idem.wav", bytes: tinyWav() }, headers })
    const thirdBody = await third.json() as { job_id: string }
    // Whatever the key answers after the purge, retries with it must not each create a job.
    expect(third.status).toBe(200)
    expect(third.headers.get("x-idempotent-replay")).toBe("true")
    expect(thirdBody.job_id).toBe(second.job_id)
    expect((await listJobs(server, key)).total).toBeLessThanOrEqual(totalBefore + 1)
    for (const job of (await listJobs(server, key, "?limit=100")).jobs) await waitForJob(server, key, job.job_id)
  })
})

describe("GET /v1/jobs?status=deleted", () => {
  const done = async (apiKey: string, name: string) => {
    const id = (await accepted(await submitFile(server, { key: apiKey, file: { name, bytes: tinyWav() } }))).job_id
    expect((await waitForJob(server, apiKey, id)).status).toBe("done")
    return id
  }
  /** Moves a row where the API cannot take it (past the window, marked purged). */
  const update = (id: string, change: "expired" | "purged") =>
    server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      if (change === "expired") yield* sql`UPDATE jobs SET deleted_at = now() - interval '25 hours' WHERE id = ${id}`
      else yield* sql`UPDATE jobs SET purged_at = now() WHERE id = ${id}`
    }).pipe(Effect.orDie))

  it("lists the caller's restorable deleted jobs, most recently deleted first, with their window", async () => {
    const owner = (await server.account()).key
    const first = await done(owner, "first.wav")
    const second = await done(owner, "second.wav")
    const live = await done(owner, "live.wav")
    const before = Math.floor(Date.now() / 1000)
    expect((await request(server, "DELETE", `/v1/jobs/${first}`, owner)).status).toBe(204)
    await sleep(20)
    expect((await request(server, "DELETE", `/v1/jobs/${second}`, owner)).status).toBe(204)
    const after = Math.floor(Date.now() / 1000)

    // Decoded strictly with the contract's JobList: the two fields are part of it.
    const deleted = await listJobs(server, owner, "?status=deleted")
    expect(deleted.jobs.map((job) => job.job_id)).toEqual([second, first])
    expect(deleted).toMatchObject({ limit: 20, offset: 0, count: 2, total: 2 })
    for (const job of deleted.jobs) {
      expect(job.status).toBe("done")
      expect(job.deleted_at).toBeGreaterThanOrEqual(before)
      expect(job.deleted_at).toBeLessThanOrEqual(after)
      expect(job.restorable_until).toBe(job.deleted_at! + 24 * 3600)
    }
    const page = await listJobs(server, owner, "?status=deleted&limit=1&offset=1")
    expect(page.jobs.map((job) => job.job_id)).toEqual([first])
    expect(page).toMatchObject({ limit: 1, offset: 1, count: 1, total: 2 })

    // The live list carries neither the deleted jobs nor the two fields.
    const current = await listJobs(server, owner)
    expect(current.jobs.map((job) => job.job_id)).toEqual([live])
    expect(current.jobs[0]).not.toHaveProperty("deleted_at")

    // Restored: back in the live list, gone from the deleted one.
    expect((await request(server, "POST", `/v1/jobs/${second}/restore`, owner)).status).toBe(200)
    expect((await listJobs(server, owner, "?status=deleted")).jobs.map((job) => job.job_id)).toEqual([first])
    expect((await listJobs(server, owner)).jobs.map((job) => job.job_id)).toContain(second)
  })

  it("never shows another account's deleted jobs", async () => {
    const mine = (await server.account()).key
    const theirs = (await server.account()).key
    const own = await done(mine, "own.wav")
    const other = await done(theirs, "other.wav")
    expect((await request(server, "DELETE", `/v1/jobs/${own}`, mine)).status).toBe(204)
    expect((await request(server, "DELETE", `/v1/jobs/${other}`, theirs)).status).toBe(204)
    expect((await listJobs(server, mine, "?status=deleted")).jobs.map((job) => job.job_id)).toEqual([own])
    expect((await listJobs(server, theirs, "?status=deleted")).jobs.map((job) => job.job_id)).toEqual([other])
  })

  it("leaves out jobs past the 24-hour window and purged ones (exactly what restore refuses)", async () => {
    const owner = (await server.account()).key
    const recent = await done(owner, "recent.wav")
    const expired = await done(owner, "expired.wav")
    const purged = await done(owner, "purged-marked.wav")
    for (const id of [recent, expired, purged]) expect((await request(server, "DELETE", `/v1/jobs/${id}`, owner)).status).toBe(204)
    await update(expired, "expired")
    await update(purged, "purged")
    const deleted = await listJobs(server, owner, "?status=deleted")
    expect(deleted.jobs.map((job) => job.job_id)).toEqual([recent])
    expect(deleted.total).toBe(1)
    await expectError(await request(server, "POST", `/v1/jobs/${expired}/restore`, owner), 404, "NOT_FOUND")
    await expectError(await request(server, "POST", `/v1/jobs/${purged}/restore`, owner), 404, "NOT_FOUND")
  })

  it("needs an account key, and still refuses unknown status values", async () => {
    await expectError(await request(server, "GET", "/v1/jobs?status=deleted", undefined), 401, "MISSING_API_KEY")
    await expectError(await request(server, "GET", "/v1/jobs?status=trashed", key), 422, "VALIDATION_FAILED")
  })

  it("is in the typed client: the Effect API and the Promise wrapper", async () => {
    const owner = (await server.account()).key
    const id = await done(owner, "typed.wav")
    expect((await request(server, "DELETE", `/v1/jobs/${id}`, owner)).status).toBe(204)
    const viaEffect = await Effect.runPromise(makeClient({ baseUrl: server.url, apiKey: owner }).pipe(
      Effect.flatMap((client) => client.api.jobList.list({ query: { status: "deleted" } })),
      Effect.provide(FetchHttpClient.layer)
    ))
    expect(viaEffect.jobs.map((job) => [job.job_id, typeof job.deleted_at, typeof job.restorable_until]))
      .toEqual([[id, "number", "number"]])
    const client = createClient({ baseUrl: server.url, apiKey: owner })
    const listed = await client.deletedJobs({ limit: 5 })
    expect(listed.jobs.map((job) => job.job_id)).toEqual([id])
    expect((await client.restore(id)).status).toBe("done")
    expect((await client.deletedJobs()).total).toBe(0)
  })
})
