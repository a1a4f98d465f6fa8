/**
 * Which languages a submit may ask for (issue 22): Whisper's list as the contract states it is
 * the list in the model files, an English-only model takes `en` and `auto` only, and a
 * multilingual server accepts a language the tiny.en server refuses (the refusals on tiny.en
 * are in api-submit.test.ts and test/openai/transcriptions.test.ts).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Exit, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTokenizer } from "../../pipeline/whisper/Tokenizer.ts"
import { languageRefusal, modelLanguages, whisperLanguages } from "../../src/contract/domain/Languages.ts"
import { accepted, expectError, listJobs, postJson, submitFile } from "../support/jobsClient.ts"
import { respond, startTestServer } from "../support/linkTestServer.ts"
import { modelsDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

const tokenizerLanguages = (model: string) =>
  [
    ...makeTokenizer(
      JSON.parse(fs.readFileSync(path.join(modelsDir, model, "tokenizer.json"), "utf8")),
      JSON.parse(fs.readFileSync(path.join(modelsDir, model, "generation_config.json"), "utf8"))
    ).special.languages.keys()
  ]

describe("the language list", () => {
  it("is the model files' list: whisper-base's 99 languages, none on tiny.en (English-only)", () => {
    expect(tokenizerLanguages("whisper-base").sort()).toEqual([...whisperLanguages].sort())
    expect(whisperLanguages).toHaveLength(99)
    expect(tokenizerLanguages("whisper-tiny.en")).toEqual([])
    expect(modelLanguages("whisper-tiny.en")).toEqual(["en"])
    expect(modelLanguages("whisper-base")).toEqual(whisperLanguages)
  })

  it.each([
    ["whisper-base", "auto", true],
    ["whisper-base", "en", true],
    ["whisper-base", "fr", true],
    ["whisper-base", "haw", true],
    ["whisper-base", "zz", false],
    ["whisper-tiny.en", "auto", true],
    ["whisper-tiny.en", "en", true],
    ["whisper-tiny.en", "fr", false],
    ["whisper-tiny.en", "zz", false]
  ] as const)("%s takes %s: %s", (model, language, takes) => {
    const refusal = languageRefusal(model, language)
    expect(refusal === undefined).toBe(takes)
    if (refusal !== undefined) expect(refusal).toContain(model.endsWith(".en") ? "`en` or `auto`" : "en, zh, de")
  })
})

describe("a server on the multilingual model", () => {
  let server: TestServer
  let key: string

  beforeAll(async () => {
    server = await startServer("languages-base", { model: "whisper-base" }, { pipeline: makeStandIn({ delayMs: 10, steps: 1 }).layer })
    key = (await server.account()).key
  })
  afterAll(async () => {
    await server?.close()
  })

  it("accepts fr (which whisper-tiny.en refuses) and refuses zz with 422 on language", async () => {
    await accepted(await submitFile(server, { key, file: { name: "a.wav", bytes: tinyWav() }, fields: { language: "fr" } }))
    const init = await postJson(server, "/v1/uploads/init", { filename: "a.wav", size_bytes: 100, language: "haw" }, key)
    expect(init.status, await init.clone().text()).toBe(200)
    const body = await expectError(
      await postJson(server, "/v1/transcribe/url", { url: "https://example.com/a.mp3", language: "zz" }, key),
      422,
      "VALIDATION_FAILED"
    )
    expect(body["detail"]).toEqual([expect.objectContaining({ loc: ["body", "language"] })])
  })
})

describe("the MCP submit_link tool on the English-only model", () => {
  const scope = Effect.runSync(Scope.make())
  let server: TestServer
  let key: string
  let linkPort: number
  let client: Client

  beforeAll(async () => {
    const links = await Effect.runPromise(Scope.provide(scope)(startTestServer({
      "/media/talk.wav": respond(200, { "content-type": "audio/wav" }, tinyWav())
    })))
    linkPort = links.port
    server = await startServer("languages-mcp", { fetchAllow: [`127.0.0.1:${links.port}`] }, {
      pipeline: makeStandIn({ delayMs: 10, steps: 1 }).layer
    })
    key = (await server.account()).key
    client = new Client({ name: "verbatim-test", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } }
    }))
  })
  afterAll(async () => {
    await client?.close()
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("refuses fr with the REST code and sentence, and queues nothing", async () => {
    const result = (await client.callTool({
      name: "submit_link",
      arguments: { url: `http://127.0.0.1:${linkPort}/media/talk.wav`, language: "fr" }
    })) as unknown as { isError?: boolean; content: Array<{ text?: string }> }
    expect(result.isError).toBe(true)
    const failure = JSON.parse(result.content[0]!.text!) as { code: string; error: string }
    expect(failure.code).toBe("VALIDATION_FAILED")
    expect(failure.error).toMatch(/English-only/)
    expect((await listJobs(server, key)).total).toBe(0)
  })
})
