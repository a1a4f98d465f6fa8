/**
 * The stored transcript over HTTP with the real pipeline (tiny.en): every rendering of one
 * job, NOT_READY before it ends, corrections carried into later downloads with timing
 * unchanged, word timings only in json and inside their segment, no-speech recordings
 * done with an empty transcript.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { inflateRawSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mediaDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"

let server: TestServer
let key: string

beforeAll(async () => {
  server = await startServer("speech")
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
})

const submit = async (file: string, fields: Record<string, string> = {}) => {
  const form = new FormData()
  form.append("file", new Blob([fs.readFileSync(path.join(mediaDir, file))], { type: "application/octet-stream" }), file)
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  const response = await fetch(`${server.url}/v1/transcribe`, { method: "POST", headers: { "X-API-Key": key }, body: form })
  expect(response.status).toBe(202)
  return (await response.json() as { job_id: string }).job_id
}

const waitDone = async (jobId: string, timeoutMs = 90_000) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const job = await (await server.get(`/v1/jobs/${jobId}`, { "X-API-Key": key })).json() as Record<string, unknown>
    if (job["status"] === "done" || job["status"] === "failed") return job
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`job ${jobId} did not finish in ${timeoutMs} ms`)
}

const result = (jobId: string, format?: string) =>
  server.get(`/v1/jobs/${jobId}/result${format ? `?format=${format}` : ""}`, { "X-API-Key": key })

const timecode = (text: string, separator: "," | ".") => {
  const [h, m, rest] = text.split(":")
  const [s, ms] = rest!.split(separator)
  return Number(h) * 3600 + Number(m) * 60 + Number(s) + Number(ms) / 1000
}

/** Cues of an SRT or VTT body: [start, end, text]. */
const parseCues = (body: string, separator: "," | ".") =>
  body.trim().split(/\n\n+/).filter((block) => block.includes("-->")).map((block) => {
    const lines = block.split("\n")
    const timing = lines.findIndex((line) => line.includes("-->"))
    const [start, end] = lines[timing]!.split(" --> ").map((t) => timecode(t.trim(), separator))
    return { start: start!, end: end!, text: lines.slice(timing + 1).join(" "), header: lines.slice(0, timing) }
  })

/** The text of word/document.xml inside a docx (a zip), read without a zip library. */
const docxText = (bytes: Uint8Array) => {
  const buffer = Buffer.from(bytes)
  const name = "word/document.xml"
  const at = buffer.indexOf(Buffer.from(name))
  const header = at - 30
  expect(buffer.readUInt32LE(header)).toBe(0x04034b50)
  const method = buffer.readUInt16LE(header + 8)
  const size = buffer.readUInt32LE(header + 18)
  const extra = buffer.readUInt16LE(header + 28)
  const data = buffer.subarray(at + name.length + extra, at + name.length + extra + size)
  return (method === 8 ? inflateRawSync(data) : data).toString("utf8").replace(/<[^>]+>/g, " ")
}

describe("GET /v1/jobs/{id}/result", () => {
  let jobId: string

  it("answers 409 NOT_READY until the job is done", async () => {
    jobId = await submit("a05_dialogue_slt_kal.wav", { word_timestamps: "true" })
    const early = await result(jobId, "srt")
    if (early.status !== 200) {
      expect(early.status).toBe(409)
      expect(await early.json()).toMatchObject({ code: "NOT_READY" })
    }
    const job = await waitDone(jobId)
    expect(job).toMatchObject({ status: "done", speech_detected: true, language: "en", progress: 100 })
    expect(job["audio_duration_seconds"]).toBeCloseTo(18.2, 1)
  })

  it("renders json with segments and word times inside their segment", async () => {
    const response = await result(jobId)
    expect(response.headers.get("content-type")).toMatch(/application\/json/)
    const transcript = await response.json() as {
      text: string
      language: string
      duration: number
      speech_detected: boolean
      segments: Array<{ start: number; end: number; text: string; speaker: null; words: Array<{ start: number; end: number; text: string }> }>
    }
    expect(transcript.text.toLowerCase()).toContain("draft contract")
    expect(transcript.speech_detected).toBe(true)
    expect(transcript.segments.length).toBeGreaterThanOrEqual(3)
    let previousEnd = 0
    for (const segment of transcript.segments) {
      expect(segment.speaker).toBeNull()
      expect(segment.start).toBeGreaterThanOrEqual(previousEnd - 0.01)
      expect(segment.end).toBeGreaterThan(segment.start)
      expect(segment.end - segment.start).toBeLessThanOrEqual(30)
      previousEnd = segment.end
      expect(segment.words.length).toBeGreaterThan(0)
      for (const word of segment.words) {
        expect(word.start).toBeGreaterThanOrEqual(segment.start)
        expect(word.end).toBeLessThanOrEqual(segment.end)
        expect(word.end).toBeGreaterThanOrEqual(word.start)
      }
    }
  })

  it("renders srt, vtt and txt that parse back with monotonic cues of at most 30 s", async () => {
    const srt = await result(jobId, "srt")
    expect(srt.headers.get("content-type")).toBe("application/x-subrip")
    const srtCues = parseCues(await srt.text(), ",")
    expect(srtCues.length).toBeGreaterThanOrEqual(3)
    srtCues.forEach((cue, i) => {
      expect(cue.header[0]).toBe(String(i + 1))
      expect(cue.end).toBeGreaterThan(cue.start)
      expect(cue.end - cue.start).toBeLessThanOrEqual(30)
      if (i > 0) expect(cue.start).toBeGreaterThanOrEqual(srtCues[i - 1]!.start)
    })
    const vtt = await result(jobId, "vtt")
    expect(vtt.headers.get("content-type")).toMatch(/^text\/vtt/)
    const vttBody = await vtt.text()
    expect(vttBody.startsWith("WEBVTT")).toBe(true)
    expect(parseCues(vttBody, ".").map((c) => [c.start, c.end])).toEqual(srtCues.map((c) => [c.start, c.end]))
    const txt = await result(jobId, "txt")
    expect(txt.headers.get("content-type")).toMatch(/^text\/plain/)
    expect((await txt.text()).toLowerCase()).toContain("legal team")
  })

  it("renders a real Word document", async () => {
    const docx = await result(jobId, "docx")
    expect(docx.headers.get("content-type")).toBe(
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    )
    expect(docx.headers.get("content-disposition")).toMatch(/attachment; filename=".+\.docx"/)
    const text = docxText(new Uint8Array(await docx.arrayBuffer()))
    expect(text).toContain("draft contract")
    expect(text).toContain("a05_dialogue_slt_kal")
  })

  it("rejects an unknown format with 422", async () => {
    const response = await result(jobId, "pdf")
    expect(response.status).toBe(422)
    expect(await response.json()).toMatchObject({ code: "VALIDATION_FAILED" })
  })

  it("carries a correction into later srt, vtt and txt with timing unchanged", async () => {
    const before = parseCues(await (await result(jobId, "srt")).text(), ",")
    const patch = await fetch(`${server.url}/v1/jobs/${jobId}/transcript`, {
      method: "PATCH",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ segments: [{ index: 0, text: "Thank you all for joining the call." }] })
    })
    expect(patch.status).toBe(200)
    const corrected = await patch.json() as { text: string; segments: Array<{ text: string }> }
    expect(corrected.segments[0]!.text).toBe("Thank you all for joining the call.")
    const after = parseCues(await (await result(jobId, "srt")).text(), ",")
    expect(after[0]!.text).toBe("Thank you all for joining the call.")
    expect(after.map((c) => [c.start, c.end])).toEqual(before.map((c) => [c.start, c.end]))
    expect(await (await result(jobId, "vtt")).text()).toContain("Thank you all for joining the call.")
    expect(await (await result(jobId, "txt")).text()).toContain("Thank you all for joining the call.")
    const outOfRange = await fetch(`${server.url}/v1/jobs/${jobId}/transcript`, {
      method: "PATCH",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ segments: [{ index: 999, text: "x" }] })
    })
    expect(outOfRange.status).toBe(422)
  })

  it("omits word times unless they were requested", async () => {
    const plain = await submit("a02_kal_weather.wav")
    await waitDone(plain)
    const transcript = await (await result(plain)).json() as { segments: Array<Record<string, unknown>> }
    expect(transcript.segments.length).toBeGreaterThan(0)
    for (const segment of transcript.segments) expect(segment).not.toHaveProperty("words")
  })

  it("ends music and noise done with speech_detected false and an empty transcript", async () => {
    for (const file of ["n02_noise.wav", "n03_music.wav"]) {
      const id = await submit(file)
      const job = await waitDone(id)
      expect(job).toMatchObject({ status: "done", speech_detected: false, speech_ratio: 0 })
      const transcript = await (await result(id)).json() as { text: string; segments: Array<unknown>; speech_detected: boolean }
      expect(transcript).toMatchObject({ text: "", segments: [], speech_detected: false })
      expect((await (await result(id, "srt")).text()).trim()).toBe("")
    }
  })

  it("fails an undecodable file with NO_AUDIO, not retryable", async () => {
    const id = await submit("x02_corrupt.mp3")
    const job = await waitDone(id)
    expect(job).toMatchObject({ status: "failed", error_code: "NO_AUDIO", retryable: false })
    expect(typeof job["error"]).toBe("string")
    const response = await result(id)
    expect(response.status).toBe(409)
  })
})
