/**
 * `POST /v1/audio/transcriptions` with the official `openai` npm client over a real socket,
 * on the stand-in pipeline: every `response_format`, the job it leaves (source `api`, listed,
 * charged), and the refusals in OpenAI's error shape (bad key, key in X-API-Key, no credit,
 * bad fields, not media, a job that fails); `prompt` reaches the job.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import OpenAI, { toFile } from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { keyHeaders, listJobs } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

const standIn = makeStandIn({ delayMs: 50, steps: 1 })
let server: TestServer
let key: string

const clientFor = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 })
const wav = (text: string, seconds = 2) => toFile(tinyWav({ text }, seconds), "talk.wav", { type: "audio/wav" })

const post = (form: FormData, headers: Record<string, string>) =>
  fetch(`${server.url}/v1/audio/transcriptions`, { method: "POST", headers, body: form })

const formWith = (fields: Record<string, string>, file?: Blob, filename = "talk.wav") => {
  const form = new FormData()
  if (file !== undefined) form.append("file", file, filename)
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  return form
}

const openAiBody = async (response: Response) =>
  ((await response.json()) as { error: { message: string; type: string; code: string | null; param: string | null } }).error

beforeAll(async () => {
  server = await startServer("openai", {}, { pipeline: standIn.layer })
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
})

describe("OpenAI-compatible transcriptions", () => {
  it("answers json with the text, and leaves an api job that is listed and charged", async () => {
    const before = (await (await server.get("/v1/usage", keyHeaders(key))).json()) as { daily_allowance_minutes: number }
    const result = await clientFor(key).audio.transcriptions.create({ file: await wav("Budget meeting on Tuesday."), model: "whisper-1" })
    expect(result.text).toBe("Budget meeting on Tuesday.")
    const listed = await listJobs(server, key)
    const job = listed.jobs[0]!
    expect(job.source).toBe("api")
    expect(job.status).toBe("done")
    const after = (await (await server.get("/v1/usage", keyHeaders(key))).json()) as { daily_allowance_minutes: number }
    // Charged like any job: its duration rounded up to the second (usage shows two decimals).
    const charged = before.daily_allowance_minutes - after.daily_allowance_minutes
    expect(charged).toBeGreaterThan(0)
    expect(Math.abs(charged - Math.ceil(job.audio_duration_seconds!) / 60)).toBeLessThanOrEqual(0.01)
  })

  it("renders text, srt, vtt and verbose_json (segments and words)", async () => {
    const client = clientFor(key)
    const text = await client.audio.transcriptions.create({
      file: await wav("Plain words."),
      model: "whisper-1",
      response_format: "text"
    })
    expect(String(text).trim()).toBe("Plain words.")
    const srt = await client.audio.transcriptions.create({ file: await wav("Subtitles here."), model: "whisper-1", response_format: "srt" })
    expect(String(srt)).toMatch(/^1\r?\n00:00:00,000 --> 00:00:0\d,\d{3}\r?\nSubtitles here\./)
    const vtt = await client.audio.transcriptions.create({ file: await wav("Web captions."), model: "whisper-1", response_format: "vtt" })
    expect(String(vtt)).toMatch(/^WEBVTT/)
    expect(String(vtt)).toContain("Web captions.")
    const verbose = await client.audio.transcriptions.create({
      file: await wav("Every detail."),
      model: "whisper-1",
      language: "en",
      prompt: "Every detail, Priya.",
      temperature: 0,
      response_format: "verbose_json",
      timestamp_granularities: ["word", "segment"]
    })
    expect(verbose.text).toBe("Every detail.")
    expect(verbose.language).toBe("en")
    expect(verbose.duration).toBeGreaterThan(0)
    expect(verbose.segments?.[0]).toMatchObject({ id: 0, text: "Every detail." })
    expect(Array.isArray(verbose.words)).toBe(true)
    const onlySegments = await client.audio.transcriptions.create({
      file: await wav("Segments only."),
      model: "whisper-1",
      response_format: "verbose_json"
    })
    expect(onlySegments.words).toBeUndefined()
    expect(onlySegments.segments).toHaveLength(1)
  })

  it("hands `prompt` to the job (issue 26: it was accepted and dropped), and refuses translations on an English-only model", async () => {
    const jobOf = async (response: Response) => {
      expect(response.status).toBe(200)
      const id = response.headers.get("x-verbatim-job-id")!
      const [row] = await server.run(Effect.gen(function*() {
        return yield* (yield* SqlClient.SqlClient)<{ prompt: string | null; task: string }>`SELECT prompt, task FROM jobs WHERE id = ${id}`
          .pipe(Effect.orDie)
      }))
      return row!
    }
    const names = "Laura Bennett, Samuel Ortiz, Priya, Coastline"
    const bytes = () => new Blob([tinyWav({ text: "Names." }, 2) as Uint8Array<ArrayBuffer>], { type: "audio/wav" })
    expect(await jobOf(await post(formWith({ model: "whisper-1", prompt: names }, bytes()), { Authorization: `Bearer ${key}` })))
      .toEqual({ prompt: names, task: "transcribe" })
    expect(await jobOf(await post(formWith({ model: "whisper-1" }, bytes()), { Authorization: `Bearer ${key}` })))
      .toEqual({ prompt: null, task: "transcribe" })
    // This server's model is whisper-tiny.en: a translation is refused before any job, naming the model.
    const translation = await fetch(`${server.url}/v1/audio/translations`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}` },
      body: formWith({ model: "whisper-1" }, bytes())
    })
    expect(translation.status).toBe(400)
    expect(await openAiBody(translation)).toMatchObject({ code: "invalid_value", param: "model" })
  })

  it("refuses a bad key, a missing key and a key sent as X-API-Key with 401 invalid_api_key", async () => {
    const failure = await clientFor("vb_wrong").audio.transcriptions.create({ file: await wav("x"), model: "whisper-1" })
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(OpenAI.AuthenticationError)
    const auth = failure as InstanceType<typeof OpenAI.AuthenticationError>
    expect(auth.status).toBe(401)
    expect(auth.code).toBe("invalid_api_key")
    expect(auth.type).toBe("invalid_request_error")

    const form = () => formWith({ model: "whisper-1" }, new Blob([tinyWav() as Uint8Array<ArrayBuffer>], { type: "audio/wav" }))
    const none = await post(form(), {})
    expect(none.status).toBe(401)
    expect((await openAiBody(none)).code).toBe("invalid_api_key")
    const wrongPlace = await post(form(), { "x-api-key": key })
    expect(wrongPlace.status).toBe(401)
    expect((await openAiBody(wrongPlace)).message).toContain("Authorization: Bearer")
  })

  it("refuses without credit (402 insufficient_quota) and creates no job", async () => {
    const broke = await server.account(undefined, { minutes: 0 })
    const failure = (await clientFor(broke.key).audio.transcriptions.create({ file: await wav("x"), model: "whisper-1" })
      .catch((error: unknown) => error)) as InstanceType<typeof OpenAI.APIError>
    expect(failure.status).toBe(402)
    expect(failure.type).toBe("insufficient_quota")
    expect(failure.code).toBe("no_credits")
    expect((await listJobs(server, broke.key)).total).toBe(0)
  })

  it("names the bad field in param", async () => {
    const headers = { authorization: `Bearer ${key}` }
    const file = new Blob([tinyWav() as Uint8Array<ArrayBuffer>], { type: "audio/wav" })
    const cases: Array<[Record<string, string>, Blob | undefined, string]> = [
      [{ model: "whisper-1", response_format: "docx" }, file, "response_format"],
      [{ model: "whisper-1", language: "english" }, file, "language"],
      [{ model: "whisper-1", temperature: "7" }, file, "temperature"],
      [{ model: "whisper-1", "timestamp_granularities[]": "sentence" }, file, "timestamp_granularities[]"],
      [{}, file, "model"],
      [{ model: "whisper-1" }, undefined, "file"]
    ]
    for (const [fields, part, param] of cases) {
      const response = await post(formWith(fields, part), headers)
      expect(response.status, param).toBe(400)
      const error = await openAiBody(response)
      expect(error).toMatchObject({ type: "invalid_request_error", param })
    }
    const notMedia = await post(formWith({ model: "whisper-1" }, new Blob(["hello"], { type: "text/plain" }), "notes.txt"), headers)
    expect(notMedia.status).toBe(415)
    expect(await openAiBody(notMedia)).toMatchObject({ code: "bad_ext", param: "file" })
  })

  it("refuses a language Whisper does not know, or the English-only model cannot transcribe, with 400 invalid_value before any job", async () => {
    const headers = { authorization: `Bearer ${key}` }
    const file = new Blob([tinyWav() as Uint8Array<ArrayBuffer>], { type: "audio/wav" })
    const jobsBefore = (await listJobs(server, key)).total
    const unknown = await post(formWith({ model: "whisper-1", language: "zz" }, file), headers)
    expect(unknown.status).toBe(400)
    const unknownBody = await openAiBody(unknown)
    expect(unknownBody).toMatchObject({ type: "invalid_request_error", code: "invalid_value", param: "language" })
    expect(unknownBody.message).toMatch(/en, zh, de/)
    // The test server runs whisper-tiny.en.
    const french = await post(formWith({ model: "whisper-1", language: "fr" }, file), headers)
    expect(french.status).toBe(400)
    const frenchBody = await openAiBody(french)
    expect(frenchBody).toMatchObject({ type: "invalid_request_error", code: "invalid_value", param: "language" })
    expect(frenchBody.message).toMatch(/English-only/)
    expect((await listJobs(server, key)).total).toBe(jobsBefore)
  })

  it("answers a job that fails with its code, and the failed job stays listed", async () => {
    const failure = (await clientFor(key).audio.transcriptions.create({
      file: await toFile(tinyWav({ fail: "noaudio" }), "empty.wav", { type: "audio/wav" }),
      model: "whisper-1"
    }).catch((error: unknown) => error)) as InstanceType<typeof OpenAI.APIError>
    expect(failure.status).toBe(400)
    expect(failure.code).toBe("no_audio")
    const failed = await listJobs(server, key, "?status=failed")
    expect(failed.jobs.some((job) => job.source === "api" && job.error_code === "NO_AUDIO")).toBe(true)
  })
})
