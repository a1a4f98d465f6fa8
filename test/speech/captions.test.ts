/**
 * Caption shaping of srt/vtt results (`max_chars_per_line`, `max_lines_per_cue`,
 * `max_cue_seconds`) on the real pipeline (whisper-tiny.en, voice encoder), over real sockets:
 * four shared clips joined into one 30 s recording are transcribed with word timestamps and
 * without (words estimated over their phrase), the two-voice dialogue with diarization, a
 * corrected phrase and a named speaker. Every line stays within its width, cues within their
 * lines and seconds, the words keep their order and their times inside their phrase; refusals
 * answer 422 with detail.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accepted, expectError, request, submitFile, waitForJob } from "../support/jobsClient.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { runCli } from "../support/process.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { encodeWav, readWavPcm16 } from "../support/wav.ts"

let server: TestServer
let key: string
const jobs: Record<string, string> = {}

interface Cue {
  readonly start: number
  readonly end: number
  readonly lines: ReadonlyArray<string>
}

const seconds = (stamp: string) => {
  const [h, m, s] = stamp.replace(",", ".").split(":")
  return Number(h) * 3600 + Number(m) * 60 + Number(s)
}

const parseCues = (body: string, format: "srt" | "vtt"): Array<Cue> => {
  const blocks = body.replace(/^WEBVTT\n/, "").split(/\n\n+/).map((b) => b.trim()).filter((b) => b !== "")
  return blocks.map((block) => {
    const rows = block.split("\n")
    const timeRow = format === "srt" ? 1 : 0
    const [from, to] = rows[timeRow]!.split(" --> ")
    return { start: seconds(from!), end: seconds(to!), lines: rows.slice(timeRow + 1) }
  })
}

const text = (cues: ReadonlyArray<Cue>, strip: (line: string) => string = (l) => l) =>
  cues.flatMap((c) => c.lines.map((l, i) => (i === 0 ? strip(l) : l))).join(" ").replace(/\s+/g, " ").trim()

const result = async (id: string, query: string) => {
  const response = await request(server, "GET", `/v1/jobs/${id}/result?${query}`, key)
  const body = await response.text()
  expect(response.status, body).toBe(200)
  return body
}

/** a01..a04 with 0.8 s of silence between them (about 30 s, four sentences). */
const joined = (): Uint8Array => {
  const parts = ["a01_slt_budget.wav", "a02_kal_weather.wav", "a03_espeak_library.wav", "a04_ked_podcast.wav"]
    .map((f) => readWavPcm16(path.join(mediaDir, f)).samples)
  const gap = new Float32Array(12_800)
  const total = parts.reduce((n, p) => n + p.length + gap.length, 0)
  const out = new Float32Array(total)
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length + gap.length
  }
  return encodeWav(out)
}

const submit = async (name: string, bytes: Uint8Array, fields: Record<string, string>) =>
  (await accepted(await submitFile(server, { key, file: { name, bytes, type: "audio/wav" }, fields }))).job_id

beforeAll(async () => {
  server = await startServer("captions", { rateLimitPerMinute: 10_000 })
  key = (await server.account()).key
  const recording = joined()
  jobs["words"] = await submit("four.wav", recording, { word_timestamps: "true" })
  jobs["plain"] = await submit("four.wav", recording, {})
  jobs["dialogue"] = await submit("a05.wav", new Uint8Array(fs.readFileSync(path.join(mediaDir, "a05_dialogue_slt_kal.wav"))), {
    diarize: "true",
    word_timestamps: "true"
  })
  for (const id of Object.values(jobs)) {
    const done = await waitForJob(server, key, id, undefined, { timeoutMs: 240_000, intervalMs: 250 })
    expect(done.status).toBe("done")
  }
}, 600_000)
afterAll(async () => {
  await server?.close()
})

describe("caption shaping", () => {
  it("keeps every srt line within max_chars_per_line=42, two lines a cue, words in order at their own times", async () => {
    const json = JSON.parse(await result(jobs["words"]!, "format=json")) as {
      segments: ReadonlyArray<{ start: number; end: number; words: ReadonlyArray<{ start: number; end: number; text: string }> }>
    }
    const words = json.segments.flatMap((s) => s.words)
    expect(words.length).toBeGreaterThan(60)
    const phrases = parseCues(await result(jobs["words"]!, "format=srt"), "srt")
    const shaped = parseCues(await result(jobs["words"]!, "format=srt&max_chars_per_line=42"), "srt")
    expect(shaped.length).toBeGreaterThan(phrases.length)
    for (const cue of shaped) {
      expect(cue.lines.length).toBeGreaterThan(0)
      expect(cue.lines.length).toBeLessThanOrEqual(2)
      for (const line of cue.lines) expect(line.length, line).toBeLessThanOrEqual(42)
    }
    // The same words in the same order as the phrase cues.
    expect(text(shaped)).toBe(text(phrases))
    expect(text(shaped).split(" ").length).toBe(words.length)
    shaped.forEach((cue, i) => {
      expect(cue.end).toBeGreaterThanOrEqual(cue.start)
      if (i > 0) expect(cue.start).toBeGreaterThanOrEqual(shaped[i - 1]!.end - 0.0005)
      // Each cue starts at one of its words' start and lies inside one phrase's span.
      expect(words.some((w) => Math.abs(w.start - cue.start) < 0.0015), `cue at ${cue.start}`).toBe(true)
      expect(phrases.some((p) => p.start <= cue.start + 0.0005 && cue.end <= p.end + 0.0005), `cue ${cue.start}-${cue.end}`).toBe(true)
    })
    // Punctuation: a cue that ends mid-sentence is the exception, not the rule, where a sentence end was within reach.
    expect(shaped.some((c) => /[.,?!]$/.test(c.lines[c.lines.length - 1]!))).toBe(true)
  })

  it("honours max_lines_per_cue and max_cue_seconds, in srt and vtt, with or without stored word times", async () => {
    for (const id of [jobs["words"]!, jobs["plain"]!]) {
      for (const format of ["srt", "vtt"] as const) {
        const body = await result(id, `format=${format}&max_chars_per_line=30&max_lines_per_cue=1&max_cue_seconds=3`)
        const cues = parseCues(body, format)
        const phrases = parseCues(await result(id, `format=${format}`), format)
        expect(cues.length).toBeGreaterThan(phrases.length)
        for (const cue of cues) {
          expect(cue.lines.length).toBe(1)
          expect(cue.lines[0]!.length).toBeLessThanOrEqual(30)
          expect(cue.end - cue.start).toBeLessThanOrEqual(3.0005)
        }
        expect(text(cues)).toBe(text(phrases))
      }
    }
    // max_cue_seconds alone: cues are cut by time only, one line each.
    const timed = parseCues(await result(jobs["words"]!, "format=vtt&max_cue_seconds=2"), "vtt")
    for (const cue of timed) {
      expect(cue.end - cue.start).toBeLessThanOrEqual(2.0005)
      expect(cue.lines.length).toBe(1)
    }
  })

  it("never mixes speakers in a cue, and carries corrections and speaker names", async () => {
    const id = jobs["dialogue"]!
    const json = JSON.parse(await result(id, "format=json")) as { segments: ReadonlyArray<{ speaker: string | null; text: string }> }
    const labels = new Set(json.segments.map((s) => s.speaker))
    expect(labels.size).toBe(2)
    const first = json.segments[0]!
    const patched = await fetch(`${server.url}/v1/jobs/${id}/transcript`, {
      method: "PATCH",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ segments: [{ index: 0, text: first.text + " Zebrafinch corrections included." }] })
    })
    expect(patched.status).toBe(200)
    const named = await fetch(`${server.url}/v1/jobs/${id}/speakers`, {
      method: "PATCH",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ names: { [first.speaker!]: "Ana" } })
    })
    expect(named.status).toBe(200)
    const srt = parseCues(await result(id, "format=srt&max_chars_per_line=24"), "srt")
    const leads = srt.map((c) => /^(Ana|SPEAKER_\d\d):/.exec(c.lines[0]!)?.[1])
    expect(leads.every((l) => l !== undefined)).toBe(true)
    expect(leads).toContain("Ana")
    expect(new Set(leads).size).toBe(2)
    for (const cue of srt) {
      for (const line of cue.lines) expect(line.length, line).toBeLessThanOrEqual(24)
      // One label per cue: a second speaker's label never shows inside a cue.
      expect(cue.lines.slice(1).some((l) => /^(Ana|SPEAKER_\d\d):/.test(l))).toBe(false)
    }
    expect(text(srt, (l) => l.replace(/^(Ana|SPEAKER_\d\d):\s*/, ""))).toContain("Zebrafinch corrections included.")
    const vtt = await result(id, "format=vtt&max_chars_per_line=24")
    expect(vtt).toContain("<v Ana>")
    expect(vtt).toContain("Zebrafinch")
  })

  it("refuses out-of-range values and shaping of other formats with 422 and detail", async () => {
    const id = jobs["words"]!
    for (const [query, field] of [
      ["format=srt&max_chars_per_line=9", "max_chars_per_line"],
      ["format=srt&max_chars_per_line=201", "max_chars_per_line"],
      ["format=vtt&max_lines_per_cue=0", "max_lines_per_cue"],
      ["format=vtt&max_lines_per_cue=6", "max_lines_per_cue"],
      ["format=srt&max_cue_seconds=0.5", "max_cue_seconds"],
      ["format=srt&max_cue_seconds=31", "max_cue_seconds"],
      ["format=srt&max_chars_per_line=abc", "max_chars_per_line"],
      ["format=json&max_chars_per_line=42", "max_chars_per_line"],
      ["format=txt&max_cue_seconds=5", "max_cue_seconds"],
      ["max_lines_per_cue=2", "max_lines_per_cue"]
    ] as const) {
      const response = await request(server, "GET", `/v1/jobs/${id}/result?${query}`, key)
      const body = await expectError(response, 422, "VALIDATION_FAILED") as unknown as { detail: ReadonlyArray<{ loc: ReadonlyArray<string> }> }
      expect(body.detail.map((d) => d.loc.join(".")), query).toContain(`query.${field}`)
    }
  })
})

describe("the CLI's caption and speaker flags", () => {
  const env = () => ({
    VERBATIM_MODELS_DIR: modelsDir,
    VERBATIM_MODEL: "whisper-tiny.en",
    VERBATIM_DECODER: "wasm",
    VERBATIM_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-captions-cli-"))
  })
  const a01 = path.join(mediaDir, "a01_slt_budget.wav")

  it("shapes srt cues with --max-chars-per-line and --max-lines-per-cue", async () => {
    const result = await runCli(["transcribe", a01, "--format", "srt", "--max-chars-per-line", "20", "--max-lines-per-cue", "1"], env())
    expect(result.code, result.stderr).toBe(0)
    const cues = parseCues(result.stdout, "srt")
    expect(cues.length).toBeGreaterThan(3)
    for (const cue of cues) {
      expect(cue.lines.length).toBe(1)
      expect(cue.lines[0]!.length).toBeLessThanOrEqual(20)
    }
    expect(text(cues).toLowerCase()).toContain("budget")
  }, 120_000)

  it("refuses shaping without srt/vtt, speaker hints without --diarize, and out-of-range values (exit 2)", async () => {
    for (const args of [
      ["--format", "json", "--max-chars-per-line", "30"],
      ["--max-speakers", "2"],
      ["--diarize", "--min-speakers", "3", "--max-speakers", "2"],
      ["--format", "srt", "--max-chars-per-line", "5"],
      ["--diarize", "--max-speakers", "21"]
    ]) {
      const result = await runCli(["transcribe", a01, ...args], env())
      expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(2)
      // Refused before any transcription (a flag error prints the command's help).
      expect(result.stdout.toLowerCase()).not.toContain("budget")
      expect(result.stderr).not.toContain("100%")
    }
  }, 120_000)
})

