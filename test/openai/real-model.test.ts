/**
 * One run of `POST /v1/audio/transcriptions` on the real pipeline (whisper-tiny.en, a short
 * clip), with the `openai` client: the words come from the model, the segments carry times.
 */
import * as fs from "node:fs"
import OpenAI, { toFile } from "openai"
import { afterAll, beforeAll, expect, it } from "vitest"
import { mediaDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"

let server: TestServer
let key: string

beforeAll(async () => {
  server = await startServer("openai-real")
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
})

it("transcribes a short clip with whisper-tiny.en", async () => {
  const client = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0, timeout: 120_000 })
  const bytes = fs.readFileSync(`${mediaDir}/a01_slt_budget.wav`)
  const result = await client.audio.transcriptions.create({
    file: await toFile(bytes, "a01.wav", { type: "audio/wav" }),
    model: "whisper-1",
    response_format: "verbose_json",
    timestamp_granularities: ["segment", "word"]
  })
  expect(result.text.toLowerCase()).toMatch(/good morning.*budget.*hiring plan/)
  expect(result.segments!.length).toBeGreaterThan(0)
  expect(result.segments![0]!.start).toBeLessThan(2)
  expect(result.words!.length).toBeGreaterThan(10)
  expect(result.duration).toBeGreaterThan(5)
}, 180_000)
