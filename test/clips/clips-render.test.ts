/**
 * Real renders over real sockets (WASM ffmpeg in a worker): a 2.5 s karaoke clip of the mp4
 * sample and a 2 s `line` clip of a wav, fetched through their signed video links and read
 * back as mp4 structure — moov before mdat (+faststart), one 1080×1920 H.264 track and one
 * AAC track, duration within 0.1 s — plus decoded frames: karaoke yellow in the caption area
 * while a word is being spoken and none before the first word. A render that ffmpeg cannot do
 * ends `failed` with the reason and the minutes credited back; deleting a clip mid-render
 * stops it and leaves no file.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Billing } from "../../services/billing/Billing.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import { eventually, expectError, request, sleep } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn } from "../support/standInPipeline.ts"
import { countPixels, createClip, downloadTo, finishedJob, frameAt, readMp4, waitForClip } from "./support.ts"

const media = "/work/shared/media"
let server: TestServer
let key: string
let accountId: AccountId
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "clips-render-"))
const standIn = makeStandIn({ delayMs: 50, steps: 1 })

beforeAll(async () => {
  server = await startServer("clips-render", { workers: 1, decoder: "wasm" }, { pipeline: standIn.layer })
  const account = await server.account()
  key = account.key
  accountId = account.accountId
}, 60_000)
afterAll(async () => {
  await server?.close()
  fs.rmSync(scratch, { recursive: true, force: true })
})

const balance = () => server.run(Effect.gen(function*() {
  return yield* (yield* Billing).balanceMinutes(accountId)
}))

const spoken = {
  text: "Hello caption world.",
  language: "en",
  duration: 8.92,
  speech_detected: true,
  segments: [{
    start: 1.5,
    end: 3.2,
    text: "Hello caption world.",
    speaker: null,
    words: [{ start: 1.5, end: 1.9, text: "Hello" }, { start: 2.0, end: 2.5, text: "caption" }, { start: 2.6, end: 3.1, text: "world." }]
  }]
}

const isYellow = (r: number, g: number, b: number) => r > 200 && g > 170 && b < 100
const isWhite = (r: number, g: number, b: number) => r > 225 && g > 225 && b > 225
/** The caption band at quarter scale: the text sits ~380 px above the bottom of 1920. */
const band = [300, 420] as const

const expectClipMp4 = (file: string, seconds: number) => {
  const mp4 = readMp4(file)
  expect(mp4.topLevel.indexOf("moov")).toBeGreaterThanOrEqual(0)
  expect(mp4.topLevel.indexOf("moov")).toBeLessThan(mp4.topLevel.indexOf("mdat"))
  const video = mp4.tracks.find((track) => track.handler === "vide")
  const audio = mp4.tracks.find((track) => track.handler === "soun")
  expect(video).toMatchObject({ codec: "avc1", width: 1080, height: 1920 })
  expect(audio?.codec).toBe("mp4a")
  expect(Math.abs(mp4.durationSeconds - seconds)).toBeLessThanOrEqual(0.1)
  expect(Math.abs(video!.durationSeconds - seconds)).toBeLessThanOrEqual(0.1)
}

describe("rendering clips", () => {
  it("renders the mp4 sample as a 9:16 karaoke clip with burned-in captions", async () => {
    const jobId = await finishedJob(server, key, {
      name: "podcast.mp4",
      bytes: fs.readFileSync(`${media}/f05_podcast_video.mp4`),
      type: "video/mp4"
    }, { durationSeconds: 8.92, transcript: spoken })
    const before = await balance()
    const response = await createClip(server, key, jobId, { start_s: 1.0, end_s: 3.5, caption_style: "karaoke" })
    const created = await response.json() as { clip_id: string; status: string; video_url: string | null }
    expect(response.status, JSON.stringify(created)).toBe(202)
    expect(created.status).toBe("queued")
    expect(created.video_url).toBeNull()
    expect(before - (await balance())).toBeCloseTo(3 / 60, 4)

    const progress: Array<number> = []
    const done = await waitForClip(server, key, created.clip_id, (clip) => {
      progress.push(clip.progress)
      return clip.status === "done" || clip.status === "failed"
    })
    expect(done.error).toBeNull()
    expect(done.status).toBe("done")
    expect(done.progress).toBe(100)
    expect(done.duration).toBeCloseTo(2.5, 3)
    expect(done.video_url).toMatch(new RegExp(`^${server.url}/v1/clips/${created.clip_id}/video\\?token=`))
    expect(progress.some((value) => value > 0 && value < 100)).toBe(true)

    const file = path.join(scratch, "podcast-clip.mp4")
    await downloadTo(done.video_url!, file)
    expectClipMp4(file, 2.5)
    const ranged = await fetch(done.video_url!, { headers: { range: "bytes=0-7" } })
    expect(ranged.status).toBe(206)
    expect(Buffer.from(await ranged.arrayBuffer()).toString("latin1", 4, 8)).toBe("ftyp")

    // Clip time 1.3 s = 2.3 s of the recording: "Hello" spoken, "caption" being spoken.
    const speaking = await frameAt(file, 1.3)
    expect(countPixels(speaking, band[0], band[1], isYellow)).toBeGreaterThan(40)
    // Clip time 0.2 s: before the first word, no caption.
    const silent = await frameAt(file, 0.2)
    expect(countPixels(silent, band[0], band[1], isYellow)).toBeLessThan(5)
    expect(countPixels(silent, band[0], band[1], isWhite)).toBeLessThan(5)
  }, 300_000)

  it("renders a wav as a waveform clip with the title and line captions", async () => {
    const jobId = await finishedJob(server, key, {
      name: "Budget meeting.wav",
      bytes: fs.readFileSync(`${media}/a01_slt_budget.wav`)
    }, {
      durationSeconds: 7,
      transcript: {
        ...spoken,
        duration: 7,
        segments: [{ start: 0.3, end: 2.4, text: "Good morning everyone.", speaker: null }]
      }
    })
    const response = await createClip(server, key, jobId, { start_s: 0.5, end_s: 2.5, caption_style: "line" })
    expect(response.status).toBe(202)
    const { clip_id } = await response.json() as { clip_id: string }
    const done = await waitForClip(server, key, clip_id)
    expect(done.error).toBeNull()
    expect(done.status).toBe("done")
    const file = path.join(scratch, "wav-clip.mp4")
    await downloadTo(done.video_url!, file)
    expectClipMp4(file, 2.0)
    const frame = await frameAt(file, 1.0)
    // The phrase, in white, in the caption band; the title, in white, near the top.
    expect(countPixels(frame, band[0], band[1], isWhite)).toBeGreaterThan(40)
    expect(countPixels(frame, 55, 110, isWhite)).toBeGreaterThan(40)
    expect(countPixels(frame, band[0], band[1], isYellow)).toBeLessThan(5)
  }, 300_000)

  it("a render ffmpeg cannot do fails with the reason and credits the minutes back", async () => {
    const jobId = await finishedJob(server, key, {
      name: "broken.wav",
      bytes: fs.readFileSync(`${media}/a02_kal_weather.wav`)
    }, { durationSeconds: 7, transcript: { ...spoken, duration: 7 } })
    // The stored recording is replaced by bytes no decoder reads.
    fs.writeFileSync(path.join(server.storage.dataDir, "media", "jobs", jobId, "original.wav"), Buffer.alloc(4096, 7))
    const before = await balance()
    const response = await createClip(server, key, jobId, { start_s: 0, end_s: 2 })
    expect(response.status).toBe(202)
    const { clip_id } = await response.json() as { clip_id: string }
    const failed = await waitForClip(server, key, clip_id)
    expect(failed.status).toBe("failed")
    expect(failed.error).toMatch(/render failed.*(no audio stream|Invalid data)/i)
    expect(failed.video_url).toBeNull()
    await eventually(async () => Math.abs((await balance()) - before) < 1e-6 ? true : undefined, "the refund")
  }, 120_000)

  it("deleting a clip mid-render stops the render and leaves no file", async () => {
    const jobId = await finishedJob(server, key, {
      name: "long.mp4",
      bytes: fs.readFileSync(`${media}/f05_podcast_video.mp4`),
      type: "video/mp4"
    }, { durationSeconds: 8.92, transcript: spoken })
    const response = await createClip(server, key, jobId, { start_s: 0, end_s: 8.5 })
    const { clip_id } = await response.json() as { clip_id: string }
    await waitForClip(server, key, clip_id, (clip) => clip.status === "rendering" && clip.progress > 0, 120_000)
    expect((await request(server, "DELETE", `/v1/clips/${clip_id}`, key)).status).toBe(204)
    await expectError(await request(server, "GET", `/v1/clips/${clip_id}`, key), 404, "NOT_FOUND")
    const task = () =>
      server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ status: string }>`SELECT status FROM tasks WHERE kind = 'render-clip' AND sub_key = ${clip_id}`
          .pipe(Effect.orDie)
        return row?.status
      }))
    await eventually(async () => (await task()) === "done" ? true : undefined, "the render task to end", 10_000)
    await sleep(500)
    const folder = path.join(server.storage.dataDir, "media", "clips", jobId)
    const left = fs.existsSync(folder) ? fs.readdirSync(folder) : []
    expect(left).toEqual([])
  }, 180_000)

  it("deleting the job mid-render stops the render and fails the clip", async () => {
    const jobId = await finishedJob(server, key, {
      name: "gone-job.mp4",
      bytes: fs.readFileSync(`${media}/f05_podcast_video.mp4`),
      type: "video/mp4"
    }, { durationSeconds: 8.92, transcript: spoken })
    const { clip_id } = await (await createClip(server, key, jobId, { start_s: 0, end_s: 8.5 })).json() as { clip_id: string }
    await waitForClip(server, key, clip_id, (clip) => clip.status === "rendering" && clip.progress > 0, 120_000)
    expect((await request(server, "DELETE", `/v1/jobs/${jobId}`, key)).status).toBe(204)
    const row = () =>
      server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [clip] = yield* sql<{ status: string; error: string | null }>`SELECT status, error FROM clips WHERE id = ${clip_id}`
          .pipe(Effect.orDie)
        return clip
      }))
    const ended = await eventually(async () => {
      const clip = await row()
      return clip?.status === "failed" ? clip : undefined
    }, "the clip to fail", 15_000)
    expect(ended.error).toMatch(/job was deleted/)
    await sleep(500)
    const folder = path.join(server.storage.dataDir, "media", "clips", jobId)
    expect(fs.existsSync(folder) ? fs.readdirSync(folder) : []).toEqual([])
  }, 180_000)
})
