/**
 * Helpers for clip tests: a finished job whose recording, length and transcript the test
 * chooses (submitted through the stand-in pipeline, then given the real facts of the file),
 * polling a clip, an mp4 box reader (ffprobe's answers, from the file's own structure), and
 * one decoded frame (the WASM ffmpeg, main thread) as RGB.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import { expect } from "vitest"
import { TranscriptStore } from "../../services/jobs/TranscriptStore.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { accepted, postJson, request, sleep, submitFile, waitForJob } from "../support/jobsClient.ts"
import type { TestServer } from "../support/server.ts"

export interface ClipBody {
  readonly clip_id: string
  readonly job_id: string
  readonly status: "queued" | "rendering" | "done" | "failed"
  readonly progress: number
  readonly start_s: number
  readonly end_s: number
  readonly caption_style: string
  readonly duration: number | null
  readonly video_url: string | null
  readonly error: string | null
  readonly created_at: number
  readonly completed_at: number | null
}

export const finishedJob = async (
  server: TestServer,
  key: string,
  file: { readonly name: string; readonly bytes: Uint8Array; readonly type?: string },
  facts?: { readonly durationSeconds: number; readonly transcript: Transcript }
) => {
  const id = (await accepted(await submitFile(server, { key, file }))).job_id
  const job = await waitForJob(server, key, id, undefined, { timeoutMs: 60_000 })
  expect(job.status).toBe("done")
  if (facts !== undefined) {
    await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE jobs SET audio_duration_seconds = ${facts.durationSeconds} WHERE id = ${id}`.pipe(Effect.orDie)
      yield* (yield* TranscriptStore).save(JobId.make(id), facts.transcript)
    }))
  }
  return id
}

export const createClip = (server: TestServer, key: string, jobId: string, body: Record<string, unknown>) =>
  postJson(server, `/v1/jobs/${jobId}/clips`, body, key)

export const getClip = async (server: TestServer, key: string, clipId: string): Promise<ClipBody> => {
  const response = await request(server, "GET", `/v1/clips/${clipId}`, key)
  const body = await response.json() as ClipBody
  expect(response.status, JSON.stringify(body)).toBe(200)
  return body
}

export const waitForClip = async (
  server: TestServer,
  key: string,
  clipId: string,
  until: (clip: ClipBody) => boolean = (clip) => clip.status === "done" || clip.status === "failed",
  timeoutMs = 240_000
): Promise<ClipBody> => {
  const deadline = Date.now() + timeoutMs
  let last: ClipBody | undefined
  while (Date.now() < deadline) {
    last = await getClip(server, key, clipId)
    if (until(last)) return last
    await sleep(250)
  }
  throw new Error(`clip ${clipId} did not reach the expected state; last: ${JSON.stringify(last)}`)
}

export interface Mp4Track {
  readonly handler: string
  readonly codec: string
  readonly width: number
  readonly height: number
  readonly durationSeconds: number
}

export interface Mp4Facts {
  readonly topLevel: ReadonlyArray<string>
  readonly durationSeconds: number
  readonly tracks: ReadonlyArray<Mp4Track>
}

/** Boxes of one level: [type, payload start, end). */
const boxes = (data: Buffer, start: number, end: number) => {
  const out: Array<{ type: string; body: number; end: number }> = []
  let at = start
  while (at + 8 <= end) {
    let size = data.readUInt32BE(at)
    const type = data.toString("latin1", at + 4, at + 8)
    let header = 8
    if (size === 1) {
      size = Number(data.readBigUInt64BE(at + 8))
      header = 16
    } else if (size === 0) size = end - at
    if (size < header) break
    out.push({ type, body: at + header, end: at + size })
    at += size
  }
  return out
}

const child = (data: Buffer, parent: { body: number; end: number }, type: string) =>
  boxes(data, parent.body, parent.end).find((box) => box.type === type)

/** Time scale and duration of an mvhd/mdhd payload (versions 0 and 1). */
const timing = (data: Buffer, body: number) =>
  data[body] === 1
    ? { scale: data.readUInt32BE(body + 20), duration: Number(data.readBigUInt64BE(body + 24)) }
    : { scale: data.readUInt32BE(body + 12), duration: data.readUInt32BE(body + 16) }

export const readMp4 = (file: string): Mp4Facts => {
  const data = fs.readFileSync(file)
  const top = boxes(data, 0, data.length)
  const moov = top.find((box) => box.type === "moov")
  if (moov === undefined) throw new Error("no moov box")
  const mvhd = timing(data, child(data, moov, "mvhd")!.body)
  const tracks = boxes(data, moov.body, moov.end).filter((box) => box.type === "trak").map((trak) => {
    const tkhd = child(data, trak, "tkhd")!
    const sizeAt = tkhd.body + (data[tkhd.body] === 1 ? 88 : 76)
    const mdia = child(data, trak, "mdia")!
    const hdlr = child(data, mdia, "hdlr")!
    const mdhd = timing(data, child(data, mdia, "mdhd")!.body)
    const stsd = child(data, child(data, child(data, mdia, "minf")!, "stbl")!, "stsd")!
    return {
      handler: data.toString("latin1", hdlr.body + 8, hdlr.body + 12),
      codec: data.toString("latin1", stsd.body + 12, stsd.body + 16),
      width: data.readUInt32BE(sizeAt) / 65536,
      height: data.readUInt32BE(sizeAt + 4) / 65536,
      durationSeconds: mdhd.duration / mdhd.scale
    }
  })
  return { topLevel: top.map((box) => box.type), durationSeconds: mvhd.duration / mvhd.scale, tracks }
}

interface Core {
  readonly FS: { writeFile(path: string, data: Uint8Array): void; readFile(path: string): Uint8Array; unlink(path: string): void }
  setLogger(logger: (log: { type: string; message: string }) => void): void
  exec(...args: Array<string>): number
}

let core: Promise<Core> | undefined
const wasmCore = () =>
  core ??= (async () => {
    const require = createRequire(import.meta.url)
    const entry = require.resolve("@ffmpeg/core").replace(/umd[/\\]ffmpeg-core\.js$/, "esm/ffmpeg-core.js")
    Object.assign(globalThis, { self: { location: { href: `file://${entry}` } } })
    const { default: create } = (await import(entry)) as { default: (options: unknown) => Promise<Core> }
    const module = await WebAssembly.compile(fs.readFileSync(require.resolve("@ffmpeg/core/wasm")))
    return create({
      instantiateWasm: (imports: WebAssembly.Imports, receive: (i: WebAssembly.Instance, m: WebAssembly.Module) => void) => {
        void WebAssembly.instantiate(module, imports).then((instance) => receive(instance, module))
        return {}
      }
    })
  })()

/** The frame at `seconds`, scaled to a quarter (270×480), as RGB24. */
export const frameAt = async (file: string, seconds: number) => {
  const ffmpeg = await wasmCore()
  ffmpeg.setLogger(() => {})
  ffmpeg.FS.writeFile("/clip.mp4", fs.readFileSync(file))
  const ret = ffmpeg.exec("-ss", seconds.toFixed(3), "-i", "/clip.mp4", "-frames:v", "1", "-vf", "scale=270:480", "-f", "rawvideo", "-pix_fmt", "rgb24", "-y", "/frame.rgb")
  expect(ret).toBe(0)
  const rgb = ffmpeg.FS.readFile("/frame.rgb")
  return { width: 270, height: 480, rgb }
}

/** Pixels in rows [fromY, toY) of a frame whose colour satisfies `test`. */
export const countPixels = (
  frame: { readonly width: number; readonly rgb: Uint8Array },
  fromY: number,
  toY: number,
  test: (r: number, g: number, b: number) => boolean
) => {
  let count = 0
  for (let y = fromY; y < toY; y++) {
    for (let x = 0; x < frame.width; x++) {
      const i = (y * frame.width + x) * 3
      if (test(frame.rgb[i]!, frame.rgb[i + 1]!, frame.rgb[i + 2]!)) count++
    }
  }
  return count
}

export const downloadTo = async (url: string, file: string) => {
  const response = await fetch(url)
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toBe("video/mp4")
  fs.writeFileSync(file, Buffer.from(await response.arrayBuffer()))
}
