/**
 * `GET /v1/jobs/{job_id}/insights` over a real socket.
 *
 * Real pipeline (whisper-tiny.en, the voice encoder, MiniLM) on a08 with diarization: the payload
 * is checked for content (summary sentences said in the transcript, the subject's words among the
 * topics, quotes timed inside their segments, the speakers' names), generated once — a second
 * call and concurrent first calls are served from one generation — and generated again after a
 * correction. A one-voice memo of two sentences (a01) gets insights sized to it. Every error: 404
 * for another account's job, 409 NOT_READY, 409 NO_SPEECH (silence), 402 transcript_locked with
 * pay links.
 *
 * Generation failure: a server whose LLM endpoint (a test double that never answers) times out
 * answers 503 INSIGHTS_UNAVAILABLE with Retry-After and stores nothing; its transcripts come from
 * the stand-in pipeline (the pipeline is not what that test is about).
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MIN_WORDS } from "../../services/insights/Insights.ts"
import { InsightsInvalidation } from "../../services/insights/InsightsInvalidation.ts"
import { InsightsStore, transcriptHash } from "../../services/insights/InsightsStore.ts"
import { TranscriptStore } from "../../services/jobs/TranscriptStore.ts"
import { insightsMinimumWords } from "../../src/contract/api/InsightsApi.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import type { Insights } from "../../src/contract/domain/Insights.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { accepted, expectError, request, submitFile, waitForJob } from "../support/jobsClient.ts"
import { mediaDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"
import type { AllSettings } from "../support/config.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"
import { makeChecker } from "../contract/openApiCheck.ts"

const submit = async (server: TestServer, key: string, file: string, fields: Record<string, string> = {}) =>
  (await accepted(await submitFile(server, {
    key,
    file: { name: file, bytes: new Uint8Array(fs.readFileSync(path.join(mediaDir, file))) },
    fields
  }))).job_id

const insightsOf = (server: TestServer, key: string, id: string) => request(server, "GET", `/v1/jobs/${id}/insights`, key)

const okInsights = async (response: Response): Promise<Insights> => {
  const text = await response.text()
  expect(response.status, text).toBe(200)
  const body = JSON.parse(text) as { insights: Insights }
  expect(Object.keys(body)).toEqual(["insights"])
  return body.insights
}

const generations = (server: TestServer, id: string) =>
  server.logs.filter((line) => line.includes("insights generated") && line.includes(id)).length

const normalize = (text: string) => text.toLowerCase().replace(/[^a-z0-9' ]+/g, " ").replace(/\s+/g, " ").trim()

describe("insights with the real pipeline", () => {
  let server: TestServer
  let key: string
  const jobs: Record<string, string> = {}

  beforeAll(async () => {
    server = await startServer("insights", { rateLimitPerMinute: 10_000 })
    key = (await server.account()).key
    jobs["a08"] = await submit(server, key, "a08_interview_three_speakers.wav", { diarize: "true", word_timestamps: "true" })
    jobs["n01"] = await submit(server, key, "n01_silence.wav")
    jobs["a01"] = await submit(server, key, "a01_slt_budget.wav")
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("answers 409 NOT_READY while the job runs", async () => {
    await expectError(await insightsOf(server, key, jobs["a08"]!), 409, "NOT_READY")
  })

  it("generates once for concurrent first calls; the payload is grounded in the transcript", async () => {
    const id = jobs["a08"]!
    await waitForJob(server, key, id, undefined, { timeoutMs: 240_000, intervalMs: 500 })
    const answers = await Promise.all([1, 2, 3].map(() => insightsOf(server, key, id).then(okInsights)))
    expect(answers[1]).toEqual(answers[0])
    expect(answers[2]).toEqual(answers[0])
    expect(generations(server, id)).toBe(1)
    const insights = answers[0]!

    const transcript = await (await request(server, "GET", `/v1/jobs/${id}/result?format=json`, key)).json() as Transcript
    const spoken = normalize(transcript.text)
    expect(insights.providers).toEqual({ summary: "extractive", topics: "extractive", quotes: "extractive", speakers: "extractive", chapters: "extractive" })

    // Summary: a few sentences, each said in the recording, in spoken order, with its speaker.
    expect(insights.summary.sentences.length).toBeGreaterThanOrEqual(2)
    let previous = -1
    for (const sentence of insights.summary.sentences) {
      expect(spoken).toContain(normalize(sentence.text))
      expect(sentence.start).toBeGreaterThanOrEqual(previous)
      previous = sentence.start
      expect(sentence.speaker).toMatch(/^SPEAKER_0[0-2]$/)
    }

    // Topics: the subject's words (erosion, sea walls, dunes, the coast) rank among them.
    const phrases = insights.topics.map((t) => t.phrase.toLowerCase())
    expect(phrases.some((p) => /erosion|sea wall|dune|coast|beach|cliff/.test(p)), phrases.join(", ")).toBe(true)
    expect(insights.topics[0]!.weight).toBe(1)
    for (const topic of insights.topics) expect(topic.count).toBeGreaterThanOrEqual(1)

    // Quotes: verbatim, timed inside the segments they come from.
    expect(insights.quotes.length).toBeGreaterThan(0)
    for (const quote of insights.quotes) {
      expect(spoken).toContain(normalize(quote.text))
      expect(quote.end).toBeGreaterThan(quote.start)
      const inside = transcript.segments.some((s) => s.start - 0.01 <= quote.start && quote.end <= s.end + 0.01) ||
        (quote.start >= transcript.segments[0]!.start && quote.end <= transcript.segments.at(-1)!.end)
      expect(inside, JSON.stringify(quote)).toBe(true)
      expect(quote.text).not.toMatch(/^(and|so|it|but|because)\b/i)
    }

    // Speakers: the three diarized voices; the names whisper-tiny.en writes correctly.
    expect(insights.speakers.map((s) => s.label)).toEqual(["SPEAKER_00", "SPEAKER_01", "SPEAKER_02"])
    const share = insights.speakers.reduce((a, s) => a + s.share, 0)
    expect(share).toBeCloseTo(1, 2)
    const names = insights.speakers.map((s) => s.name ?? "")
    expect(names[0]).toMatch(/Laura/)
    expect(names[1]).toMatch(/Samuel/)
    // Each name with its confidence and the sentences it rests on (said in the recording).
    for (const speaker of insights.speakers.filter((s) => s.name !== null)) {
      expect(speaker.name_confidence).toBeGreaterThan(0)
      expect(speaker.name_evidence.length).toBeGreaterThan(0)
      for (const e of speaker.name_evidence) expect(spoken).toContain(normalize(e.text))
    }
    expect(insights.chapters.length).toBeGreaterThanOrEqual(1)
  })

  it("serves the stored insights afterwards without generating again", async () => {
    const id = jobs["a08"]!
    const stored = await server.run(InsightsStore.use((store) => store.get(JobId.make(id))))
    const response = await insightsOf(server, key, id)
    // Speakers with names, confidences and evidence are what /openapi.json documents.
    const checker = makeChecker(await (await server.get("/openapi.json")).json())
    expect((await checker.check("GET", `${server.url}/v1/jobs/${id}/insights`, response.clone())).status).toBe(200)
    const first = await okInsights(response)
    expect(first.speakers.some((s) => s.name_evidence.length > 0)).toBe(true)
    const again = await server.run(InsightsStore.use((store) => store.get(JobId.make(id))))
    expect(generations(server, id)).toBe(1)
    expect(Option.getOrThrow(again).generatedAt).toEqual(Option.getOrThrow(stored).generatedAt)
    const outcome = Option.getOrThrow(again).outcome
    expect(outcome._tag === "Done" ? outcome.insights : undefined).toEqual(first)
  })

  it("generates again after a correction of the transcript", async () => {
    const id = jobs["a08"]!
    const patch = await fetch(`${server.url}/v1/jobs/${id}/transcript`, {
      method: "PATCH",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ segments: [{ index: 0, text: "Welcome back to Coastline, the show about our changing shores and tides." }] })
    })
    expect(patch.status).toBe(200)
    const insights = await okInsights(await insightsOf(server, key, id))
    expect(generations(server, id)).toBe(2)
    expect(insights.summary.sentences.length).toBeGreaterThan(0)
  })

  it("a correction's invalidation handled late keeps the insights of the current transcript, drops others", async () => {
    const id = JobId.make(jobs["a08"]!)
    const current = Option.getOrThrow(await server.run(InsightsStore.use((store) => store.get(id))))
    const event = { seq: 0, txid: "0", job_id: id, account_id: null, type: "changed" as const, created_at: new Date() }
    const handleChanged = Effect.flatMap(InsightsInvalidation, (consumer) => consumer.handle(event))
    await server.run(handleChanged)
    const kept = Option.getOrThrow(await server.run(InsightsStore.use((store) => store.get(id))))
    expect(kept.transcriptHash).toBe(current.transcriptHash)
    expect(kept.generatedAt).toEqual(current.generatedAt)
    // A row made from another transcript version goes.
    expect(await server.run(InsightsStore.use((store) => store.put(id, "an-older-transcript", current.outcome, 1)))).toBe(true)
    await server.run(handleChanged)
    expect(Option.isNone(await server.run(InsightsStore.use((store) => store.get(id))))).toBe(true)
    // Served again from one new generation.
    await okInsights(await insightsOf(server, key, id))
    expect(generations(server, id)).toBe(3)
  })

  it("answers 409 NO_SPEECH for silence; a one-voice memo of two sentences (a01) gets insights", async () => {
    expect(insightsMinimumWords).toBe(MIN_WORDS)
    await waitForJob(server, key, jobs["n01"]!, undefined, { timeoutMs: 120_000, intervalMs: 500 })
    const silence = await insightsOf(server, key, jobs["n01"]!)
    const body = await silence.clone().json() as { words: number; minimum_words: number }
    await expectError(silence, 409, "NO_SPEECH")
    expect(body).toMatchObject({ words: 0, minimum_words: MIN_WORDS })

    const id = jobs["a01"]!
    await waitForJob(server, key, id, undefined, { timeoutMs: 120_000, intervalMs: 500 })
    // A `no_speech` row stored before the upgrade (the hash of the transcript alone, 21 words
    // under the old bound of 30) is stale now: the memo is generated again.
    const stored = Option.getOrThrow(await server.run(TranscriptStore.use((store) => store.get(JobId.make(id)))))
    const oldHash = createHash("sha256").update(JSON.stringify(stored)).digest("base64url")
    expect(oldHash).not.toBe(transcriptHash(stored))
    expect(await server.run(InsightsStore.use((store) => store.put(JobId.make(id), oldHash, { _tag: "NoSpeech", words: 21 }, 1)))).toBe(true)
    const response = await insightsOf(server, key, id)
    // The answer is the one /openapi.json documents for 200.
    const checker = makeChecker(await (await server.get("/openapi.json")).json())
    expect((await checker.check("GET", `${server.url}/v1/jobs/${id}/insights`, response.clone())).status).toBe(200)
    const insights = await okInsights(response)
    const transcript = await (await request(server, "GET", `/v1/jobs/${id}/result?format=json`, key)).json() as Transcript
    const spoken = normalize(transcript.text)
    expect(spoken.split(" ").length).toBeLessThan(30)
    // Sized to the memo: its sentences are the summary, a few topics, one chapter, at most one quote.
    expect(normalize(insights.summary.text)).toBe(spoken)
    expect(insights.summary.sentences.length).toBeGreaterThanOrEqual(1)
    expect(insights.summary.sentences.length).toBeLessThanOrEqual(3)
    expect(insights.topics.length).toBeGreaterThanOrEqual(1)
    expect(insights.topics.length).toBeLessThanOrEqual(4)
    const phrases = insights.topics.map((t) => t.phrase.toLowerCase())
    expect(phrases.some((p) => /budget|hiring|support team/.test(p)), phrases.join(", ")).toBe(true)
    for (const phrase of phrases) expect(spoken).toContain(normalize(phrase))
    expect(insights.quotes.length).toBeLessThanOrEqual(1)
    for (const quote of insights.quotes) expect(spoken).toContain(normalize(quote.text))
    expect(insights.chapters.length).toBe(1)
    expect(insights.chapters[0]!.title.length).toBeGreaterThan(0)
    expect(insights.speakers).toEqual([])
    expect(generations(server, id)).toBe(1)

    // A stored payload in a shape this version no longer reads counts as absent: made again, not a 500.
    await server.run(Effect.gen(function*() {
      yield* (yield* SqlClient.SqlClient)`UPDATE job_insights SET payload = payload - 'providers' WHERE job_id = ${id}`.pipe(Effect.orDie)
    }))
    expect(await okInsights(await insightsOf(server, key, id))).toEqual(insights)
    expect(generations(server, id)).toBe(2)
  })

  it("answers 402 transcript_locked with pay links for a locked job", async () => {
    const id = jobs["a01"]!
    await server.run(Effect.gen(function*() {
      yield* (yield* SqlClient.SqlClient)`UPDATE jobs SET locked = true WHERE id = ${id}`.pipe(Effect.orDie)
    }))
    const response = await insightsOf(server, key, id)
    const body = await response.clone().json() as Record<string, unknown>
    await expectError(response, 402, "transcript_locked")
    expect(String(body["upgrade_url"])).toMatch(/^http/)
    expect(String(body["checkout_url"])).toMatch(/^http/)
  })

  it("answers 404 for another account's job; forgets a deleted job's insights and makes them again once restored", async () => {
    const other = (await server.account()).key
    await expectError(await insightsOf(server, other, jobs["a08"]!), 404, "NOT_FOUND")
    const deleted = await request(server, "DELETE", `/v1/jobs/${jobs["a08"]!}`, key)
    expect(deleted.status).toBeLessThan(300)
    await expectError(await insightsOf(server, key, jobs["a08"]!), 404, "NOT_FOUND")
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      const row = await server.run(InsightsStore.use((store) => store.get(JobId.make(jobs["a08"]!))))
      if (Option.isNone(row)) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(Option.isNone(await server.run(InsightsStore.use((store) => store.get(JobId.make(jobs["a08"]!)))))).toBe(true)
    // Restored, the job's insights are generated again on the next request.
    const before = generations(server, jobs["a08"]!)
    expect((await request(server, "POST", `/v1/jobs/${jobs["a08"]!}/restore`, key)).status).toBe(200)
    await okInsights(await insightsOf(server, key, jobs["a08"]!))
    expect(generations(server, jobs["a08"]!)).toBe(before + 1)
  })
})

/**
 * A server with the stand-in pipeline whose LLM endpoint is `llm`, a test double started here
 * (the pipeline is not what these tests are about: its transcript is the directive's text).
 */
const withLlmDouble = (label: string, llm: http.RequestListener, overrides: Partial<AllSettings>) => {
  const state = { server: undefined as unknown as TestServer, key: "", calls: 0 }
  const double = http.createServer((request, response) => {
    state.calls++
    llm(request, response)
  })
  beforeAll(async () => {
    await new Promise<void>((resolve) => double.listen(0, "127.0.0.1", resolve))
    state.server = await startServer(label, {
      llmUrl: Option.some(`http://127.0.0.1:${(double.address() as AddressInfo).port}/v1`),
      ...overrides
    }, { pipeline: makeStandIn({ delayMs: 100, steps: 2 }).layer })
    state.key = (await state.server.account()).key
  }, 60_000)
  afterAll(async () => {
    await state.server?.close()
    double.closeAllConnections()
    await new Promise((resolve) => double.close(resolve))
  })
  return state
}

/** A done job whose transcript is `text`. */
const spokenJob = async (server: TestServer, key: string, text: string) => {
  const id = (await accepted(await submitFile(server, { key, file: { name: "talk.wav", bytes: tinyWav({ text }) } }))).job_id
  await waitForJob(server, key, id, (job) => job.status === "done")
  return id
}

describe("insights when generation fails", () => {
  // An OpenAI-compatible endpoint that never answers: every call times out.
  const ctx = withLlmDouble("insights-llm", () => undefined, { llmTimeoutSeconds: 1 })

  it("answers 503 INSIGHTS_UNAVAILABLE with Retry-After and stores nothing", async () => {
    const { server, key } = ctx
    const id = await spokenJob(server, key, "Sea walls are expensive and they often push the erosion further down the beach " +
      "while dune grass holds the sand together and costs almost nothing so volunteers plant it every Saturday on the " +
      "northern beaches where the cliff retreats two meters a year.")
    const response = await insightsOf(server, key, id)
    expect(response.headers.get("retry-after")).toMatch(/^\d+$/)
    // The answer is the one /openapi.json documents for 503.
    const checker = makeChecker(await (await server.get("/openapi.json")).json())
    expect((await checker.check("GET", `${server.url}/v1/jobs/${id}/insights`, response.clone())).status).toBe(503)
    await expectError(response, 503, "INSIGHTS_UNAVAILABLE")
    expect(ctx.calls).toBeGreaterThanOrEqual(1)
    const stored = await server.run(InsightsStore.use((store) => store.get(JobId.make(id))))
    expect(Option.isNone(stored)).toBe(true)
  })
})

describe("insights still generating when the request's wait ends", () => {
  // Answers after 2.5 s with a message that is not JSON: the generation outlasts the request's
  // 1 s wait, then falls back to the extractive fields.
  const ctx = withLlmDouble("insights-pending", (_request, response) => {
    setTimeout(() => {
      response.writeHead(200, { "Content-Type": "application/json" })
      response.end(JSON.stringify({ choices: [{ message: { content: "no JSON here" } }] }))
    }, 2_500)
  }, { llmTimeoutSeconds: 30, insightsWaitSeconds: 1 })

  it("answers 503 INSIGHTS_PENDING with Retry-After, then the stored insights once generated", async () => {
    const { server, key } = ctx
    const id = await spokenJob(server, key, "The roots of the dune grass hold the sand together and it costs almost " +
      "nothing, so the cheapest defense against coastal erosion might be grass planted every Saturday by forty " +
      "volunteers on the northern beaches.")
    const pending = await insightsOf(server, key, id)
    expect(pending.headers.get("retry-after")).toMatch(/^\d+$/)
    await expectError(pending, 503, "INSIGHTS_PENDING")
    const deadline = Date.now() + 30_000
    let response = await insightsOf(server, key, id)
    while (response.status === 503 && Date.now() < deadline) {
      await response.text()
      response = await insightsOf(server, key, id)
    }
    const insights = await okInsights(response)
    // The LLM's answer failed the check: every field is the extractive one.
    expect(insights.providers.summary).toBe("extractive")
    expect(generations(server, id)).toBe(1)
  })
})
