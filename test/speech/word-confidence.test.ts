/**
 * Word confidence on the real pipeline (whisper-tiny.en), over real sockets: with
 * `word_timestamps`, every word of the json result carries `confidence` in 0..1 (the mean of its
 * tokens' probabilities); the same clip buried in noise comes back with lower confidences; the
 * OpenAI route's `verbose_json` words carry it as `probability`; without `word_timestamps` there
 * are no words and so no confidence.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accepted, request, submitFile, waitForJob } from "../support/jobsClient.ts"
import { mediaDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { encodeWav, readWavPcm16 } from "../support/wav.ts"

let server: TestServer
let key: string

interface Word {
  readonly text: string
  readonly start: number
  readonly end: number
  readonly confidence?: number
}
interface Result {
  readonly segments: ReadonlyArray<{ readonly text: string; readonly words?: ReadonlyArray<Word> }>
}

/** a01 with white noise as loud as the speech (0 dB SNR), from a fixed seed. */
const noisyA01 = (): Uint8Array => {
  const { samples } = readWavPcm16(path.join(mediaDir, "a01_slt_budget.wav"))
  let energy = 0
  for (const s of samples) energy += s * s
  const rms = Math.sqrt(energy / samples.length)
  let seed = 12345
  const uniform = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648
  }
  // Uniform noise on [−a, a] has RMS a/√3.
  const amplitude = rms * Math.sqrt(3) * 1.0
  const mixed = samples.map((s) => Math.max(-1, Math.min(1, s + (2 * uniform() - 1) * amplitude)))
  return encodeWav(mixed)
}

const run = async (name: string, bytes: Uint8Array, wordTimestamps: boolean): Promise<Result> => {
  const { job_id } = await accepted(await submitFile(server, {
    key,
    file: { name, bytes, type: "audio/wav" },
    fields: wordTimestamps ? { word_timestamps: "true" } : {}
  }))
  const done = await waitForJob(server, key, job_id, undefined, { timeoutMs: 120_000, intervalMs: 250 })
  expect(done.status).toBe("done")
  const response = await request(server, "GET", `/v1/jobs/${job_id}/result`, key)
  expect(response.status).toBe(200)
  return await response.json() as Result
}

const wordsOf = (result: Result) => result.segments.flatMap((s) => s.words ?? [])
const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length

beforeAll(async () => {
  server = await startServer("word-confidence", { rateLimitPerMinute: 10_000 })
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
})

describe("word confidence", () => {
  const clean = new Uint8Array(fs.readFileSync(path.join(mediaDir, "a01_slt_budget.wav")))

  it("gives every word a confidence in 0..1, lower over noise than on clean speech", async () => {
    const cleanWords = wordsOf(await run("a01.wav", clean, true))
    const noisyWords = wordsOf(await run("a01-noisy.wav", noisyA01(), true))
    expect(cleanWords.length).toBeGreaterThan(10)
    expect(noisyWords.length).toBeGreaterThan(0)
    for (const w of [...cleanWords, ...noisyWords]) {
      expect(w.confidence, JSON.stringify(w)).toBeTypeOf("number")
      expect(w.confidence!).toBeGreaterThanOrEqual(0)
      expect(w.confidence!).toBeLessThanOrEqual(1)
    }
    const cleanMean = mean(cleanWords.map((w) => w.confidence!))
    const noisyMean = mean(noisyWords.map((w) => w.confidence!))
    console.log(`mean word confidence: clean ${cleanMean.toFixed(3)} (${cleanWords.length} words), noisy ${noisyMean.toFixed(3)} (${noisyWords.length} words)`)
    expect(cleanMean).toBeGreaterThan(0.7)
    expect(cleanMean - noisyMean).toBeGreaterThan(0.1)
  }, 300_000)

  it("has no words, so no confidence, without word_timestamps", async () => {
    const result = await run("a01.wav", clean, false)
    expect(result.segments.length).toBeGreaterThan(0)
    expect(JSON.stringify(result)).not.toContain("confidence")
    expect(wordsOf(result)).toEqual([])
  }, 300_000)

  it("carries it as `probability` on the OpenAI route's verbose_json words", async () => {
    const form = new FormData()
    form.append("file", new Blob([clean as Uint8Array<ArrayBuffer>], { type: "audio/wav" }), "a01.wav")
    form.append("model", "whisper-1")
    form.append("response_format", "verbose_json")
    form.append("timestamp_granularities[]", "word")
    const response = await fetch(`${server.url}/v1/audio/transcriptions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}` },
      body: form
    })
    const body = await response.json() as { words: ReadonlyArray<{ word: string; probability?: number }> }
    expect(response.status, JSON.stringify(body)).toBe(200)
    expect(body.words.length).toBeGreaterThan(10)
    for (const w of body.words) {
      expect(w.probability, JSON.stringify(w)).toBeTypeOf("number")
      expect(w.probability!).toBeGreaterThanOrEqual(0)
      expect(w.probability!).toBeLessThanOrEqual(1)
    }
  }, 300_000)
})
