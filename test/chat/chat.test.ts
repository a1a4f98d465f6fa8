/**
 * "Ask this recording" over real sockets: `POST` and `GET /v1/jobs/{job_id}/chat`.
 *
 * A signed-in user (the website's session, `Authorization: Bearer vbs_…`) asks about their job
 * and gets the moments that answer it (times, speaker and the speaker's given name, relevance),
 * and the conversation is listed back; an API key — even the same account's — is refused with
 * 403 `SIGN_IN_REQUIRED`; another person's job is 404; a job not done is 409; bad questions 422.
 * Without an LLM endpoint `answer` is null. With one (a small OpenAI-compatible double on a
 * real socket: the model is a boundary this file is not about) the answer is the model's when
 * it cites the moments it was given, and null when it cites none, cites one it was not given,
 * or the endpoint fails. Every answer is checked against /openapi.json.
 *
 * Transcripts: the stand-in pipeline, then a stored diarized one (test/speakers/interview.ts);
 * MiniLM (real weights) indexes it for the search the moments come from.
 */
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../services/Accounts.ts"
import { ApiKeys } from "../../services/ApiKeys.ts"
import { Billing } from "../../services/billing/Billing.ts"
import { AccountId } from "../../src/contract/domain/Ids.ts"
import { makeChecker } from "../contract/openApiCheck.ts"
import { interview, saveTranscript } from "../speakers/interview.ts"
import { accepted, eventually, submitFile, waitForJob } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, type StandInDirective, tinyWav } from "../support/standInPipeline.ts"
import { makeWeb, type WebUser } from "../web-api/support.ts"

interface Moment {
  start: number
  end: number
  text: string
  speaker: string | null
  speaker_name: string | null
  relevance: number
}
interface Message {
  id: string
  question: string
  answer: string | null
  moments: Array<Moment>
  created_at: number
}

const bearer = (user: WebUser) => ({ Authorization: `Bearer ${user.accessToken}` })

/** A signed-in owner with one finished, diarized, indexed job whose SPEAKER_01 is named "Emma Stone". */
const setUp = async (server: TestServer) => {
  const checker = makeChecker(await (await server.get("/openapi.json")).json())
  const web = await makeWeb(server)
  const owner = await web.signUp(`owner-${Date.now()}@example.com`)

  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const response = await fetch(server.url + path, {
      method,
      headers: body === undefined ? headers : { ...headers, "Content-Type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body)
    })
    const checked = await checker.check(method, server.url + path, response)
    return { status: checked.status, body: checked.body }
  }

  const submit = async (user: WebUser, name: string, directive: StandInDirective = {}) =>
    (await accepted(await submitFile(server, { file: { name, bytes: tinyWav(directive) }, headers: bearer(user) }))).job_id

  // Credit, so that the test does not rest on the owner's unmetered use (another feature).
  await server.run(Effect.gen(function*() {
    yield* (yield* Billing).grant(AccountId.make(owner.accountId), 1000, "test funding")
  }))
  const job = await submit(owner, "interview.wav")
  await waitForJob(server, undefined, job, undefined, { headers: bearer(owner) })
  await saveTranscript(server, job, interview)
  const renamed = await call("PATCH", `/v1/jobs/${job}/speakers`, bearer(owner), { names: { SPEAKER_01: "Emma Stone" } })
  expect(renamed.status, JSON.stringify(renamed.body)).toBe(200)
  await eventually(async () => {
    const found = await call("POST", "/v1/library/search", bearer(owner), { q: "fishing boats at dawn", job_ids: [job] })
    return (found.body.hits as Array<{ text: string }>).some((h) => h.text.includes("forty")) ? true : undefined
  }, "the job indexed", 30_000, 200)

  /** The owner's own API key: same account, but a key. */
  const ownerKey = await server.run(Effect.gen(function*() {
    yield* (yield* Accounts).grantApiAccess(AccountId.make(owner.accountId))
    return (yield* (yield* ApiKeys).create(AccountId.make(owner.accountId))).key
  }))

  const ask = (headers: Record<string, string>, id: string, question: unknown) =>
    call("POST", `/v1/jobs/${id}/chat`, headers, { question })
  const history = (headers: Record<string, string>, id: string) => call("GET", `/v1/jobs/${id}/chat`, headers)

  return { web, owner, job, ownerKey, call, submit, ask, history }
}

describe("ask this recording, without an LLM endpoint", () => {
  let server: TestServer
  let s: Awaited<ReturnType<typeof setUp>>

  beforeAll(async () => {
    server = await startServer("chat", { rateLimitPerMinute: 10_000 }, { pipeline: makeStandIn({ delayMs: 100, steps: 1 }).layer })
    s = await setUp(server)
  }, 90_000)
  afterAll(async () => {
    await server?.close()
  })

  it("a signed-in user gets the moments that answer, with times and speakers' names; answer null", async () => {
    const answer = await s.ask(bearer(s.owner), s.job, "  How many fishing boats pass the harbour at dawn? ")
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    const message = answer.body as Message
    expect(message.question).toBe("How many fishing boats pass the harbour at dawn?")
    expect(message.answer).toBeNull()
    expect(message.moments.length).toBeGreaterThanOrEqual(1)
    expect(message.moments.length).toBeLessThanOrEqual(5)
    expect(message.moments[0]).toMatchObject({
      start: 20,
      end: 27,
      text: "About forty fishing boats pass the harbour every morning at dawn.",
      speaker: "SPEAKER_01",
      speaker_name: "Emma Stone",
      relevance: 1
    })
    for (const m of message.moments) {
      expect(m.relevance).toBeGreaterThan(0)
      expect(m.relevance).toBeLessThanOrEqual(1)
      expect(m.speaker_name).toBe(m.speaker === "SPEAKER_01" ? "Emma Stone" : null)
      expect(interview.segments.some((seg) => seg.start <= m.start && m.end <= seg.end && seg.text.includes(m.text))).toBe(true)
    }
    expect(Math.abs(message.created_at - Date.now() / 1000)).toBeLessThan(60)
  })

  it("keeps the conversation per job and person, oldest first", async () => {
    const second = await s.ask(bearer(s.owner), s.job, "When is the lighthouse repainted?")
    expect(second.status).toBe(200)
    expect((second.body as Message).moments[0]!.text).toContain("repaint the lighthouse every spring")
    const listed = await s.history(bearer(s.owner), s.job)
    expect(listed.status).toBe(200)
    const messages = (listed.body as { messages: Array<Message> }).messages
    expect(messages.map((m) => m.question)).toEqual([
      "How many fishing boats pass the harbour at dawn?",
      "When is the lighthouse repainted?"
    ])
    expect(messages[1]).toEqual(second.body)

    // Another signed-in person cannot see or ask about the owner's job.
    const member = await s.web.invited(s.owner, `member-${Date.now()}@example.com`)
    const notTheirs = await s.ask(bearer(member), s.job, "How many boats?")
    expect(notTheirs.status).toBe(404)
    expect(notTheirs.body.code).toBe("NOT_FOUND")
    expect((await s.history(bearer(member), s.job)).status).toBe(404)
  }, 30_000)

  it("an API key is refused with 403 SIGN_IN_REQUIRED, even the same account's", async () => {
    for (const answer of [
      await s.ask({ "X-API-Key": s.ownerKey }, s.job, "How many boats?"),
      await s.history({ "X-API-Key": s.ownerKey }, s.job)
    ]) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(403)
      expect(answer.body).toEqual({
        error: "Chat about a transcript needs a signed-in user on the website; API keys cannot chat.",
        code: "SIGN_IN_REQUIRED"
      })
    }
    // Nothing was kept for the refused question.
    expect(((await s.history(bearer(s.owner), s.job)).body as { messages: Array<Message> }).messages).toHaveLength(2)
    // Without any credential: the key is missing (401).
    expect((await s.ask({}, s.job, "How many boats?")).status).toBe(401)
  })

  it("422 for an empty, blank or too long question; 409 before the job is done; 404 for an unknown job", async () => {
    for (const question of ["", "   ", "x".repeat(1001), 42]) {
      const refused = await s.ask(bearer(s.owner), s.job, question)
      expect(refused.status, JSON.stringify(question)).toBe(422)
      expect(refused.body.code).toBe("VALIDATION_FAILED")
      expect(refused.body.detail[0].loc).toEqual(["body", "question"])
    }
    // Longer than a search query (500): the search takes its opening.
    const longest = "How many fishing boats pass the harbour at dawn? ".repeat(21).slice(0, 1000)
    expect(longest).toHaveLength(1000)
    const long = await s.ask(bearer(s.owner), s.job, longest)
    expect(long.status, JSON.stringify(long.body)).toBe(200)
    expect((long.body as Message).question).toBe(longest.trim())
    expect((long.body as Message).moments[0]!.text).toContain("About forty fishing boats")

    // Progress every half second, so the DELETE below stops it at once and frees the runner for the next job.
    const running = await s.submit(s.owner, "long.wav", { delayMs: 20_000, steps: 40 })
    const early = await s.ask(bearer(s.owner), running, "What is said?")
    expect(early.status).toBe(409)
    expect(early.body.code).toBe("NOT_READY")
    await s.call("DELETE", `/v1/jobs/${running}`, bearer(s.owner))

    expect((await s.ask(bearer(s.owner), "5b2f8a4e-1c3d-4e5f-9a6b-7c8d9e0f1a2b", "Anything?")).status).toBe(404)

    // A locked transcript cannot be asked about (402 with the pay links); its conversation can still be read.
    const unpaid = await s.submit(s.owner, "unpaid.wav")
    await waitForJob(server, undefined, unpaid, undefined, { headers: bearer(s.owner) })
    await server.run(Effect.gen(function*() {
      yield* (yield* SqlClient.SqlClient)`UPDATE jobs SET locked = true WHERE id = ${unpaid}`.pipe(Effect.orDie)
    }))
    const locked = await s.ask(bearer(s.owner), unpaid, "What is said?")
    expect(locked.status, JSON.stringify(locked.body)).toBe(402)
    expect(locked.body.code).toBe("transcript_locked")
    expect(locked.body.checkout_url).toMatch(/^http/)
    expect((await s.history(bearer(s.owner), unpaid)).body).toEqual({ messages: [] })
  })
})

describe("ask this recording, with an LLM endpoint", () => {
  let server: TestServer
  let s: Awaited<ReturnType<typeof setUp>>
  let llm: http.Server
  const seen: Array<any> = []
  let reply: () => { status: number; content?: string } = () => ({ status: 500 })

  beforeAll(async () => {
    llm = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        seen.push(JSON.parse(Buffer.concat(chunks).toString("utf8")))
        const answer = reply()
        res.writeHead(answer.status, { "content-type": "application/json" })
        res.end(JSON.stringify(answer.content === undefined ? { error: "down" } : {
          id: "chatcmpl-test",
          object: "chat.completion",
          choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: answer.content } }]
        }))
      })
    })
    await new Promise<void>((resolve) => llm.listen(0, "127.0.0.1", resolve))
    server = await startServer("chat-llm", {
      rateLimitPerMinute: 10_000,
      llmUrl: Option.some(`http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1`),
      llmModel: "test-model"
    }, { pipeline: makeStandIn({ delayMs: 100, steps: 1 }).layer })
    s = await setUp(server)
  }, 90_000)
  afterAll(async () => {
    await server?.close()
    await new Promise<void>((resolve) => llm.close(() => resolve()))
  })

  const question = "How many fishing boats pass the harbour at dawn?"

  it("answers in writing from the moments, citing them", async () => {
    seen.length = 0
    reply = () => ({ status: 200, content: JSON.stringify({ answer: "About forty fishing boats pass every morning at dawn [1]." }) })
    const answer = await s.ask(bearer(s.owner), s.job, question)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    const message = answer.body as Message
    expect(message.answer).toBe("About forty fishing boats pass every morning at dawn [1].")
    expect(message.moments[0]!.text).toContain("About forty fishing boats")

    // The model was given the question and exactly the moments answered, numbered, with speakers' names.
    expect(seen).toHaveLength(1)
    expect(seen[0].model).toBe("test-model")
    const prompt = seen[0].messages[1].content as string
    expect(prompt).toContain(question)
    message.moments.forEach((m, i) => {
      expect(prompt).toContain(`[${i + 1}] (`)
      expect(prompt).toContain(m.text)
    })
    expect(prompt).toContain(`Emma Stone): ${message.moments[0]!.text}`)
    expect(prompt).not.toContain(`[${message.moments.length + 1}] (`)
    expect(seen[0].response_format.type).toBe("json_schema")

    const listed = (await s.history(bearer(s.owner), s.job)).body as { messages: Array<Message> }
    expect(listed.messages.at(-1)!.answer).toBe(message.answer)
  })

  it("no written answer when it cites nothing, cites a moment it was not given, or the endpoint fails", async () => {
    const cases: Array<() => { status: number; content?: string }> = [
      () => ({ status: 200, content: JSON.stringify({ answer: "Forty boats pass at dawn." }) }),
      () => ({ status: 200, content: JSON.stringify({ answer: "Forty boats pass at dawn [9]." }) }),
      () => ({ status: 200, content: "not json at all" }),
      () => ({ status: 500 })
    ]
    for (const next of cases) {
      reply = next
      const answer = await s.ask(bearer(s.owner), s.job, question)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect((answer.body as Message).answer).toBeNull()
      expect((answer.body as Message).moments[0]!.text).toContain("About forty fishing boats")
    }
  })
})
