/**
 * Housekeeping of direct uploads: bytes sent to a ticket that is never committed are
 * removed once the ticket's 24 hours have passed (the watchdog sweep, with a moved clock).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { sweep } from "../../services/jobs/JobWatchdog.ts"
import { controlledClock } from "../support/clock.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

let server: TestServer

beforeAll(async () => {
  server = await startServer("upload-purge", {}, { pipeline: makeStandIn({ delayMs: 10, steps: 1 }).layer })
})
afterAll(async () => {
  await server?.close()
})

it("removes an uncommitted upload after its ticket expires, and the commit then finds nothing", async () => {
  const owner = await server.account()
  const bytes = tinyWav()
  const init = await fetch(`${server.url}/v1/uploads/init`, {
    method: "POST",
    headers: { "X-API-Key": owner.key, "Content-Type": "application/json" },
    body: JSON.stringify({ filename: "later.wav", size_bytes: bytes.length })
  })
  const ticket = await init.json() as { job_id: string; object_key: string; upload_url: string; options: unknown }
  expect((await fetch(ticket.upload_url, { method: "PUT", body: Buffer.from(bytes) })).status).toBe(200)
  const stored = path.join(server.storage.dataDir, "media", ticket.object_key)
  expect(fs.existsSync(stored)).toBe(true)

  const early = await server.run(sweep)
  expect(early.abandonedUploads).toBe(0)
  expect(fs.existsSync(stored)).toBe(true)

  const clock = controlledClock(Date.now())
  clock.advance("25 hours")
  const later = await server.run(clock.at(sweep))
  expect(later.abandonedUploads).toBe(1)
  expect(fs.existsSync(stored)).toBe(false)

  const commit = await fetch(`${server.url}/v1/uploads/${ticket.job_id}/commit`, {
    method: "POST",
    headers: { "X-API-Key": owner.key, "Content-Type": "application/json" },
    body: JSON.stringify({ object_key: ticket.object_key, options: ticket.options })
  })
  expect(commit.status).toBe(404)
  expect(await commit.json()).toMatchObject({ code: "NOT_FOUND" })
})
