/**
 * The media orphan sweep (run by the watchdog every pass): write temporaries and owner folders
 * with neither a job nor an upload ticket go once idle past VERBATIM_UPLOAD_ORPHAN_SECONDS;
 * a job's media, a ticket's bytes and anything still fresh stay.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { sweepMediaOrphans } from "../../services/storage/MediaOrphans.ts"
import { controlledClock } from "../support/clock.ts"
import { waitForJob } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

let server: TestServer

beforeAll(async () => {
  server = await startServer("upload-orphans", { uploadOrphanSeconds: 3600 }, { pipeline: makeStandIn({ delayMs: 10, steps: 1 }).layer })
})
afterAll(async () => {
  await server?.close()
})

const media = (...parts: Array<string>) => path.join(server.storage.dataDir, "media", ...parts)
const plant = (file: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, "partial bytes")
  return file
}

it("removes temporaries and unowned folders once idle, and keeps jobs' and tickets' media", async () => {
  const owner = await server.account()
  const bytes = tinyWav()
  // A finished job's media.
  const form = new FormData()
  form.append("file", new Blob([Buffer.from(bytes)]), "kept.wav")
  const submitted = await fetch(`${server.url}/v1/transcribe`, { method: "POST", headers: { "X-API-Key": owner.key }, body: form })
  const job = await submitted.json() as { job_id: string }
  expect(submitted.status).toBe(202)
  await waitForJob(server, owner.key, job.job_id)
  const jobMedia = fs.readdirSync(media("jobs", job.job_id)).map((name) => media("jobs", job.job_id, name))
  expect(jobMedia.length).toBeGreaterThan(0)
  // A ticket's uploaded bytes, not yet committed.
  const init = await fetch(`${server.url}/v1/uploads/init`, {
    method: "POST",
    headers: { "X-API-Key": owner.key, "Content-Type": "application/json" },
    body: JSON.stringify({ filename: "later.wav", size_bytes: bytes.length })
  })
  const ticket = await init.json() as { job_id: string; object_key: string; upload_url: string }
  expect((await fetch(ticket.upload_url, { method: "PUT", body: Buffer.from(bytes) })).status).toBe(200)
  // What a process killed mid-write leaves: a temporary beside a ticket's object, a multipart
  // upload's whole file whose job row was never written, and a temporary of one.
  const strayTemporary = plant(media(ticket.object_key + ".0a1b2c3d.partial"))
  const unowned = crypto.randomUUID()
  const unownedFile = plant(media("jobs", unowned, "original.wav"))
  const unownedTemporary = plant(media("jobs", crypto.randomUUID(), "original.mp3.deadbeef.partial"))
  // Not an owner id: never touched.
  const foreign = plant(media("jobs", "not-an-id", "notes.txt"))

  const fresh = await server.run(sweepMediaOrphans)
  expect(fresh).toEqual({ temporaries: 0, orphans: 0 })
  for (const file of [strayTemporary, unownedFile, unownedTemporary]) expect(fs.existsSync(file)).toBe(true)

  const clock = controlledClock(Date.now())
  clock.advance("2 hours")
  const idle = await server.run(clock.at(sweepMediaOrphans))
  expect(idle).toEqual({ temporaries: 2, orphans: 1 })
  expect(fs.existsSync(strayTemporary)).toBe(false)
  expect(fs.existsSync(media("jobs", unowned))).toBe(false)
  expect(fs.existsSync(path.dirname(unownedTemporary))).toBe(false)
  expect(fs.existsSync(media(ticket.object_key))).toBe(true)
  for (const file of [...jobMedia, foreign]) expect(fs.existsSync(file)).toBe(true)
})
