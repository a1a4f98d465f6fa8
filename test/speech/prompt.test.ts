/**
 * `prompt` (issue 26) on the real pipeline (whisper-tiny.en) over real sockets: the shared
 * three-voice interview (a08) spells its guest "Priya" only when the prompt names her, and the
 * prompt is counted in the model's own tokens at submit: 224 are taken, 225 refused on every
 * submit path (422 with `detail` naming the field; 400 `invalid_value` on the OpenAI route).
 * `task=translate` is refused on this English-only model the same way.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTokenizer } from "../../pipeline/whisper/Tokenizer.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { runCli } from "../support/process.ts"
import { startServer, type TestServer } from "../support/server.ts"

let server: TestServer
let key: string

beforeAll(async () => {
  server = await startServer("prompt")
  key = (await server.account()).key
})
afterAll(async () => {
  await server?.close()
})

const names = "Laura Bennett, Samuel Ortiz, Priya, Coastline"

const upload = (file: string, fields: Record<string, string> = {}) => {
  const form = new FormData()
  form.append("file", new Blob([fs.readFileSync(path.join(mediaDir, file))], { type: "application/octet-stream" }), file)
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  return fetch(`${server.url}/v1/transcribe`, { method: "POST", headers: { "X-API-Key": key }, body: form })
}

const submit = async (file: string, fields: Record<string, string> = {}) => {
  const response = await upload(file, fields)
  expect(response.status).toBe(202)
  return (await response.json() as { job_id: string }).job_id
}

const waitDone = async (jobId: string, timeoutMs = 150_000) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const job = await (await server.get(`/v1/jobs/${jobId}`, { "X-API-Key": key })).json() as Record<string, unknown>
    if (job["status"] === "done" || job["status"] === "failed") return job
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
  throw new Error(`job ${jobId} did not finish in ${timeoutMs} ms`)
}

const text = async (jobId: string) => (await server.get(`/v1/jobs/${jobId}/result?format=txt`, { "X-API-Key": key })).text()

const tokenizerOf = (model: string) => {
  const read = (file: string) => JSON.parse(fs.readFileSync(path.join(modelsDir, model, file), "utf8"))
  return makeTokenizer(read("tokenizer.json"), read("generation_config.json"))
}

/** A prompt of exactly `n` tokens of tiny.en's tokenizer (" a" is one token), checked with the tokenizer itself. */
const promptOf = (n: number) => {
  const tokenizer = tokenizerOf("whisper-tiny.en")
  const prompt = Array.from({ length: n }, () => "a").join(" ")
  expect(tokenizer.encode(" " + prompt)).toHaveLength(n)
  return prompt
}

describe("Tokenizer.encode", () => {
  it("gives GPT-2's ids on the English vocabulary and round-trips any text on both", () => {
    // GPT-2's byte-level BPE, which whisper-tiny.en's vocabulary is: " Hello" 18435, " world" 995.
    expect(tokenizerOf("whisper-tiny.en").encode(" Hello world")).toEqual([18435, 995])
    for (const model of ["whisper-tiny.en", "whisper-base"]) {
      const tokenizer = tokenizerOf(model)
      for (const text of [" " + names, " It's 2026 — café, ñandú, 日本語; don't   stop!\n"]) {
        const ids = tokenizer.encode(text)
        expect(ids.every((id) => id < tokenizer.special.eot)).toBe(true)
        expect(tokenizer.decode(ids)).toBe(text)
      }
    }
    // The names cost 12 tokens in the multilingual vocabulary, 11 in the English one.
    expect(tokenizerOf("whisper-base").encode(" " + names)).toHaveLength(12)
    expect(tokenizerOf("whisper-tiny.en").encode(" " + names)).toHaveLength(11)
  })
})

describe("prompt", () => {
  it("spells the interview's names as the prompt gives them (a08: Priya)", async () => {
    const plain = await submit("a08_interview_three_speakers.wav")
    const prompted = await submit("a08_interview_three_speakers.wav", { prompt: names })
    expect((await waitDone(plain))["status"]).toBe("done")
    expect((await waitDone(prompted))["status"]).toBe("done")
    const without = await text(plain)
    const withPrompt = await text(prompted)
    // Without the prompt tiny.en hears another name ("Purdue"); whisper-base writes "Prairie".
    expect(without).not.toContain("Priya")
    expect(withPrompt.match(/Priya/g)?.length).toBe(2)
    for (const name of ["Laura Bennett", "Samuel Ortiz", "Coastline"]) expect(withPrompt).toContain(name)
    // The prompt is context, not text: it does not appear as a line of its own.
    expect(withPrompt).not.toContain(names)
  }, 240_000)

  it("takes 224 tokens and refuses 225 on every submit path", async () => {
    const longest = promptOf(224)
    const tooLong = promptOf(225)
    // Accepted (a silent file: the job is quick).
    await waitDone(await submit("n01_silence.wav", { prompt: longest }))

    const multipart = await upload("n01_silence.wav", { prompt: tooLong })
    expect(multipart.status).toBe(422)
    const refused = await multipart.json() as { code: string; error: string; detail: Array<{ loc: Array<string>; msg: string }> }
    expect(refused.code).toBe("VALIDATION_FAILED")
    expect(refused.detail[0]!.loc).toEqual(["body", "prompt"])
    expect(refused.error).toContain("225 tokens")

    const json = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, { method: "POST", headers: { "X-API-Key": key, "Content-Type": "application/json" }, body: JSON.stringify(body) })
    const link = await json("/v1/transcribe/url", { url: "https://example.com/a.mp3", prompt: tooLong })
    expect(link.status).toBe(422)
    expect((await link.json() as typeof refused).detail[0]!.loc).toEqual(["body", "prompt"])
    const init = await json("/v1/uploads/init", { filename: "a.wav", size_bytes: 100, prompt: tooLong })
    expect(init.status).toBe(422)
    expect((await init.json() as typeof refused).detail[0]!.loc).toEqual(["body", "prompt"])
    const ticket = await json("/v1/uploads/init", { filename: "a.wav", size_bytes: 100, prompt: names })
    expect(ticket.status).toBe(200)
    expect((await ticket.json() as { options: Record<string, unknown> }).options["prompt"]).toBe(names)

    // Keyless samples take the same option and the same limit.
    const form = new FormData()
    form.append("file", new Blob([fs.readFileSync(path.join(mediaDir, "n01_silence.wav"))]), "n01_silence.wav")
    form.append("prompt", tooLong)
    const keyless = await fetch(`${server.url}/v1/transcribe`, { method: "POST", body: form })
    expect(keyless.status).toBe(422)
    expect((await keyless.json() as typeof refused).detail[0]!.loc).toEqual(["body", "prompt"])

    const openAi = new FormData()
    openAi.append("file", new Blob([fs.readFileSync(path.join(mediaDir, "n01_silence.wav"))]), "n01_silence.wav")
    openAi.append("model", "whisper-1")
    openAi.append("prompt", tooLong)
    const compat = await fetch(`${server.url}/v1/audio/transcriptions`, { method: "POST", headers: { Authorization: `Bearer ${key}` }, body: openAi })
    expect(compat.status).toBe(400)
    expect((await compat.json() as { error: { code: string; param: string } }).error).toMatchObject({ code: "invalid_value", param: "prompt" })
  }, 120_000)

  it("refuses task=translate on an English-only model, and a task it does not know", async () => {
    const translate = await upload("n01_silence.wav", { task: "translate" })
    expect(translate.status).toBe(422)
    const body = await translate.json() as { detail: Array<{ loc: Array<string> }>; error: string }
    expect(body.detail[0]!.loc).toEqual(["body", "task"])
    expect(body.error).toContain("English-only")
    expect((await upload("n01_silence.wav", { task: "summarise" })).status).toBe(422)

    const openAi = new FormData()
    openAi.append("file", new Blob([fs.readFileSync(path.join(mediaDir, "n01_silence.wav"))]), "n01_silence.wav")
    openAi.append("model", "whisper-1")
    const compat = await fetch(`${server.url}/v1/audio/translations`, { method: "POST", headers: { Authorization: `Bearer ${key}` }, body: openAi })
    expect(compat.status).toBe(400)
    expect((await compat.json() as { error: { code: string; message: string } }).error.code).toBe("invalid_value")
  })
})

describe("verbatim transcribe --prompt / --translate", () => {
  const env = { VERBATIM_MODELS_DIR: modelsDir, VERBATIM_MODEL: "whisper-tiny.en", VERBATIM_DECODER: "wasm" }

  it("spells the interview's names with --prompt", async () => {
    const result = await runCli(["transcribe", path.join(mediaDir, "a08_interview_three_speakers.wav"), "--prompt", names], env)
    expect(result.code).toBe(0)
    expect(result.stdout.match(/Priya/g)?.length).toBe(2)
    expect(result.stdout).toContain("Samuel Ortiz")
  }, 120_000)

  it("refuses --translate on an English-only model with a reason", async () => {
    const result = await runCli(["transcribe", path.join(mediaDir, "a01_slt_budget.wav"), "--translate"], env)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("task=translate needs a multilingual model; whisper-tiny.en is English-only")
  }, 60_000)
})
