/**
 * The LLM provider against a small OpenAI-compatible endpoint started by the test (a boundary
 * double on a real socket), with the real MiniLM for the extractive fields it falls back to.
 */
import { assert, describe, it } from "@effect/vitest"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, beforeEach } from "vitest"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import { Embedder } from "../../search/Embedder.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { type GenerateOptions, Insights } from "../../services/insights/Insights.ts"
import { LlmClient } from "../../services/insights/LlmClient.ts"
import { CHUNK_CHARS } from "../../services/insights/LlmInsights.ts"
import { A08, a08Transcript, labelsOf, manifest, modelsDir } from "./transcripts.ts"

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}
type Reply = { readonly status: number; readonly json?: unknown; readonly raw?: string } | "hang"

let server: http.Server
let port = 0
let seen: Array<Seen> = []
let reply: (request: Seen) => Reply = () => ({ status: 500, raw: "not set" })
const hanging: Array<http.ServerResponse> = []

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      const request: Seen = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: text ? JSON.parse(text) : null }
      seen.push(request)
      const answer = reply(request)
      if (answer === "hang") {
        hanging.push(res)
        return
      }
      res.writeHead(answer.status, { "content-type": "application/json" })
      res.end(answer.raw ?? JSON.stringify(answer.json))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(async () => {
  for (const res of hanging) res.destroy()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})
beforeEach(() => {
  seen = []
})

/** A chat completion whose message content is `content` (JSON-encoded unless a string). */
const completion = (content: unknown): Reply => ({
  status: 200,
  json: {
    id: "chatcmpl-test",
    object: "chat.completion",
    model: "test-model",
    choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: typeof content === "string" ? content : JSON.stringify(content) } }]
  }
})

/** How many titles the final prompt asks for. */
const titlesAsked = (request: Seen): number => Number(/exactly (\d+) short titles/.exec(request.body.messages[1].content)![1])

const grounded = {
  summary: [
    { sentence: "Laura Bennett talks with geologist Samuel Ortiz about coastal erosion.", evidence: "my guest today is Samuel Ortiz, a geologist who studies coastal erosion" },
    { sentence: "Sea walls cost a lot and can push the erosion further along the beach.", evidence: "Sea walls are expensive, around twenty thousand dollars per meter" },
    { sentence: "Priya's volunteers plant dune grass, a cheap defense.", evidence: "Every Saturday about forty volunteers plant dune grass." }
  ]
}
const titles = (n: number, title = "Coastal erosion") => Array.from({ length: n }, (_, i) => `${title} ${i + 1}`)

const embedder = Embedder.layer({ modelsDir, threads: 1 }).pipe(Layer.provide(OnnxRuntime.layer({ threads: 1, idleUnloadMs: 30_000 })))

const generate = (transcript: Transcript, options: { timeoutMs?: number; url?: string; generate?: GenerateOptions } = {}) =>
  Effect.gen(function*() {
    return yield* (yield* Insights).generate(transcript, options.generate)
  }).pipe(Effect.provide(Insights.layer({
    llm: {
      url: options.url ?? `http://127.0.0.1:${port}/v1`,
      model: "test-model",
      apiKey: "test-key",
      timeoutMs: options.timeoutMs ?? 10_000
    }
  })))

const expectUnavailable = (error: { readonly _tag: string }, retryable: boolean) => {
  if (error._tag !== "InsightsUnavailable") return assert.fail(`expected InsightsUnavailable, got ${error._tag}`)
  assert.strictEqual((error as unknown as { retryable: boolean }).retryable, retryable)
}

describe("Insights with an LLM endpoint (test double)", () => {
  it.layer(embedder)((it) => {
    it.effect("sends a schema-constrained chat request and uses a grounded answer, with times from the evidence", () =>
      Effect.gen(function*() {
        reply = (r) => completion({ ...grounded, chapter_titles: titles(titlesAsked(r)) })
        const transcript = a08Transcript()
        const insights = yield* generate(transcript)

        assert.strictEqual(seen.length, 1)
        const [request] = seen
        assert.strictEqual(request!.method, "POST")
        assert.strictEqual(request!.url, "/v1/chat/completions")
        assert.strictEqual(request!.headers.authorization, "Bearer test-key")
        assert.match(String(request!.headers["content-type"]), /application\/json/)
        const body = request!.body
        assert.strictEqual(body.model, "test-model")
        assert.strictEqual(body.temperature, 0)
        assert.deepStrictEqual(body.messages.map((m: { role: string }) => m.role), ["system", "user"])
        assert.include(body.messages[1].content, "Laura Bennett: Welcome back to Coastline")
        assert.include(body.messages[1].content, "Samuel Ortiz: Thanks, Laura.")
        assert.strictEqual(body.response_format.type, "json_schema")
        assert.strictEqual(body.response_format.json_schema.strict, true)
        assert.deepStrictEqual(body.response_format.json_schema.schema.required, ["summary", "chapter_titles"])

        assert.deepStrictEqual(insights.providers, {
          summary: "llm", topics: "extractive", quotes: "extractive", speakers: "extractive", chapters: "llm"
        })
        assert.deepStrictEqual(insights.summary.sentences.map((s) => s.text), grounded.summary.map((p) => p.sentence))
        const labels = labelsOf(manifest[A08]!.turns!)
        const [first, second, third] = insights.summary.sentences
        assert.deepStrictEqual([first!.speaker, first!.speaker_name], [labels.get("A"), "Laura Bennett"])
        assert.deepStrictEqual([second!.speaker, second!.speaker_name], [labels.get("B"), "Samuel Ortiz"])
        assert.deepStrictEqual([third!.speaker, third!.speaker_name], [labels.get("C"), "Priya"])
        const segment = transcript.segments.find((s) => s.text.startsWith("Sea walls are expensive"))!
        assert.strictEqual(second!.start, segment.start)
        assert.isBelow(second!.end, segment.end)
        assert.deepStrictEqual(insights.chapters.map((c) => c.title), titles(insights.chapters.length))
      }))

    it.effect("a made-up quote falls back to the extractive summary; valid titles are still used", () =>
      Effect.gen(function*() {
        reply = (r) =>
          completion({
            summary: [...grounded.summary, { sentence: "Storms are getting worse.", evidence: "storms get worse every single decade now" }],
            chapter_titles: titles(titlesAsked(r))
          })
        const insights = yield* generate(a08Transcript())
        assert.strictEqual(insights.providers.summary, "extractive")
        assert.strictEqual(insights.providers.chapters, "llm")
        const full = a08Transcript().text
        for (const s of insights.summary.sentences) assert.include(full, s.text)
      }))

    it.effect("a name the transcript never says falls back, in the summary and in a title", () =>
      Effect.gen(function*() {
        reply = (r) =>
          completion({
            summary: [{ sentence: "Host Laura Bennett interviews Professor Miller.", evidence: grounded.summary[0]!.evidence }],
            chapter_titles: titles(titlesAsked(r), "Miller on erosion")
          })
        const insights = yield* generate(a08Transcript())
        assert.deepStrictEqual([insights.providers.summary, insights.providers.chapters], ["extractive", "extractive"])
        assert.notInclude(JSON.stringify(insights), "Miller")
      }))

    it.effect("the wrong number of titles keeps the extractive chapters", () =>
      Effect.gen(function*() {
        reply = (r) => completion({ ...grounded, chapter_titles: titles(titlesAsked(r) + 1) })
        const insights = yield* generate(a08Transcript())
        assert.deepStrictEqual([insights.providers.summary, insights.providers.chapters], ["llm", "extractive"])
      }))

    it.effect("an answer that is not the expected JSON keeps every extractive field", () =>
      Effect.gen(function*() {
        for (const content of ["Here is your summary: the coast erodes.", { summary: "one string", chapter_titles: [] }]) {
          reply = () => completion(content)
          const insights = yield* generate(a08Transcript())
          assert.deepStrictEqual([insights.providers.summary, insights.providers.chapters], ["extractive", "extractive"])
        }
        reply = () => ({ status: 200, raw: "{\"not\":\"a completion\"}" })
        const insights = yield* generate(a08Transcript())
        assert.strictEqual(insights.providers.summary, "extractive")
      }))

    it.effect("5xx and 429 → InsightsUnavailable, retryable; another 4xx → not retryable", () =>
      Effect.gen(function*() {
        for (const [status, retryable] of [[500, true], [503, true], [429, true], [401, false], [404, false]] as const) {
          reply = () => ({ status, json: { error: { message: "nope" } } })
          expectUnavailable(yield* Effect.flip(generate(a08Transcript())), retryable)
        }
      }))

    it.effect("a timeout or an unreachable endpoint → InsightsUnavailable, retryable", () =>
      Effect.gen(function*() {
        reply = () => "hang"
        const started = Date.now()
        const timedOut = yield* Effect.flip(generate(a08Transcript(), { timeoutMs: 400 }))
        expectUnavailable(timedOut, true)
        assert.include((timedOut as { reason: string }).reason, "timeout")
        assert.isBelow(Date.now() - started, 8000)

        const closed = http.createServer()
        yield* Effect.promise(() => new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve)))
        const deadPort = (closed.address() as AddressInfo).port
        yield* Effect.promise(() => new Promise<void>((resolve) => closed.close(() => resolve())))
        expectUnavailable(yield* Effect.flip(generate(a08Transcript(), { url: `http://127.0.0.1:${deadPort}/v1` })), true)
      }))

    it.effect("LlmClient: a full /chat/completions URL is used as is; no key, no Authorization header", () =>
      Effect.gen(function*() {
        reply = () => completion("```json\n{\"ok\": true}\n```")
        const client = LlmClient.make({ url: `http://127.0.0.1:${port}/api/chat/completions/`, model: "m" })
        const answer = yield* client.complete({ system: "s", user: "u", schemaName: "x", schema: { type: "object" } })
        assert.deepStrictEqual(answer, { ok: true })
        assert.strictEqual(seen[0]!.url, "/api/chat/completions")
        assert.isUndefined(seen[0]!.headers.authorization)
        assert.strictEqual(seen[0]!.body.response_format.json_schema.name, "x")
      }))

    it.effect("provider: extractive never calls the endpoint", () =>
      Effect.gen(function*() {
        reply = () => ({ status: 500, raw: "must not be called" })
        const insights = yield* generate(a08Transcript(), { generate: { provider: "extractive" } })
        assert.strictEqual(seen.length, 0)
        assert.strictEqual(insights.providers.summary, "extractive")
      }))

    it.effect("a long recording is map-reduced: notes per chunk, then one final request on the notes", () =>
      Effect.gen(function*() {
        const base = a08Transcript()
        const span = base.segments.at(-1)!.end + 1
        const copies = Math.ceil((2.2 * CHUNK_CHARS) / base.text.length)
        const long: Transcript = {
          ...base,
          segments: Array.from({ length: copies }, (_, k) => base.segments.map((s) => ({ ...s, start: s.start + k * span, end: s.end + k * span }))).flat()
        }
        reply = (r) => {
          if (r.body.response_format.json_schema.name === "transcript_notes") {
            // A note resting on the first turn of the chunk.
            const line: string = r.body.messages[1].content.split("\n")[1]
            const evidence = line.replace(/^\[[^\]]*\] [^:]+: /, "").split(" ").slice(0, 8).join(" ")
            return completion({ notes: [{ sentence: "The host opens the show.", evidence }] })
          }
          return completion({ ...grounded, chapter_titles: titles(titlesAsked(r)) })
        }
        const insights = yield* generate(long)
        const names = seen.map((r) => r.body.response_format.json_schema.name)
        assert.isAtLeast(names.length, 3)
        assert.deepStrictEqual(names, [...names.slice(0, -1).map(() => "transcript_notes"), "transcript_insights"])
        for (const r of seen.slice(0, -1)) assert.isAtMost(r.body.messages[1].content.length, CHUNK_CHARS + 300)
        assert.include(seen.at(-1)!.body.messages[1].content, "The host opens the show.")
        assert.strictEqual(insights.providers.summary, "llm")
        assert.isAtLeast(insights.chapters.length, 2)
      }))
  })
})
