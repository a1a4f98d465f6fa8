/**
 * Library search and clip search over real sockets, with the index following the jobs through
 * the job event feed and the `index` task: a finished job becomes searchable, a correction
 * re-indexes it (old words gone, new ones found), delete removes it, restore brings it back,
 * purge removes it for good; searches never cross accounts; keyless sample jobs are not indexed;
 * locked jobs are hidden. Every error answer of `POST /v1/library/search` and
 * `GET /v1/jobs/{job_id}/clips/search` (400, 402, 404, 409, 422).
 *
 * Transcripts come from the stand-in pipeline (one segment, text chosen per file): the pipeline
 * is not what this file is about. MiniLM (real weights) embeds passages and questions.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { JobStore } from "../../services/jobs/JobStore.ts"
import {
  accepted,
  eventually,
  expectError,
  postJson,
  request,
  submitFile,
  waitForJob
} from "../support/jobsClient.ts"
import { apertiumInstalled } from "../support/apertium.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, type StandInDirective, tinyWav } from "../support/standInPipeline.ts"

interface Hit {
  job_id: string
  filename: string | null
  start: number
  end: number
  text: string
  speaker: string | null
  score: number
  relevance: number
  highlights: Array<[number, number]>
}

let server: TestServer
let keyA: string
let keyB: string
const standIn = makeStandIn({ delayMs: 100, steps: 1 })

const lighthouse = "The lighthouse keeper repaints the red tower every spring before the winter storms arrive."
const bakery = "The bakery on Elm Street sells warm sourdough bread every morning at seven."
const harbour = "The harbour master counts the fishing boats at dawn and writes their names in a ledger."

beforeAll(async () => {
  server = await startServer("api-search", { rateLimitPerMinute: 10_000 }, { pipeline: standIn.layer })
  keyA = (await server.account()).key
  keyB = (await server.account()).key
}, 60_000)
afterAll(async () => {
  await server?.close()
})

const submit = async (key: string | undefined, name: string, directive: StandInDirective) =>
  await accepted(await submitFile(server, { key, file: { name, bytes: tinyWav(directive) } }))

const search = async (key: string, body: Record<string, unknown>): Promise<{ hits: Array<Hit>; query_ms: number }> => {
  const response = await postJson(server, "/v1/library/search", body, key)
  const text = await response.text()
  expect(response.status, text).toBe(200)
  const answer = JSON.parse(text) as { hits: Array<Hit>; query_ms: number }
  expect(Object.keys(answer).sort()).toEqual(["hits", "query_ms"])
  return answer
}

/** Whether the job ranks at all for `q` (min_relevance 0: what the index holds, not how well it answers). */
const found = async (key: string, q: string, jobId: string) =>
  (await search(key, { q, min_relevance: 0 })).hits.some((h) => h.job_id === jobId)

/** Waits until a search for `q` does (or does not) find the job. */
const until = (key: string, q: string, jobId: string, present: boolean) =>
  eventually(async () => ((await found(key, q, jobId)) === present ? true : undefined), `"${q}" ${present ? "finds" : "no longer finds"} ${jobId}`, 30_000, 200)

/** The texts stored in the index for the job (what the backend holds, before any read filter). */
const indexedTexts = (jobId: string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ text: string }>`SELECT text FROM search_passages WHERE job_id = ${jobId}`.pipe(Effect.orDie)
    return rows.map((row) => row.text)
  }))
const passagesOf = async (jobId: string) => (await indexedTexts(jobId)).length
const untilPassages = (jobId: string, count: number) =>
  eventually(async () => ((await passagesOf(jobId)) === count ? true : undefined), `${count} passages for ${jobId}`, 30_000, 200)

describe("the library index follows the jobs", () => {
  let a: string
  let b: string

  beforeAll(async () => {
    a = (await submit(keyA, "lighthouse.wav", { text: lighthouse })).job_id
    b = (await submit(keyB, "bakery.wav", { text: bakery })).job_id
    await waitForJob(server, keyA, a)
    await waitForJob(server, keyB, b)
  }, 60_000)

  it("indexes a finished job: a paraphrased question finds the moment, with its times and highlights", async () => {
    await until(keyA, "when is the tower painted", a, true)
    const { hits, query_ms } = await search(keyA, { q: "when does the keeper paint the tower" })
    expect(hits[0]!.job_id).toBe(a)
    expect(hits[0]!.filename).toBe("lighthouse.wav")
    expect(hits[0]!.text).toBe(lighthouse)
    expect(hits[0]!.start).toBe(0)
    expect(hits[0]!.end).toBe(0.5)
    expect(hits[0]!.score).toBeGreaterThan(0)
    const highlighted = hits[0]!.highlights.map(([s, e]) => hits[0]!.text.slice(s, e).toLowerCase())
    expect(highlighted).toEqual(expect.arrayContaining(["keeper", "tower"]))
    expect(query_ms).toBeGreaterThanOrEqual(0)
  })

  it("gives each hit a relevance in 0..1 and leaves out hits under min_relevance (default 0.5): an unanswerable question gets none", async () => {
    await until(keyA, "when is the tower painted", a, true)
    const right = (await search(keyA, { q: "when does the keeper paint the tower" })).hits[0]!
    expect(right.relevance).toBeGreaterThanOrEqual(0.5)
    expect(right.relevance).toBeLessThanOrEqual(1)
    // Without the threshold the lighthouse still ranks, with a low relevance; by default it is not returned.
    const all = (await search(keyA, { q: "stock market crash in Tokyo", min_relevance: 0 })).hits
    expect(all.length).toBeGreaterThan(0)
    for (const hit of all) expect(hit.relevance).toBeLessThan(0.5)
    expect((await search(keyA, { q: "stock market crash in Tokyo" })).hits).toEqual([])
    // A threshold above the right hit's relevance leaves it out too.
    expect((await search(keyA, { q: "when does the keeper paint the tower", min_relevance: 1 })).hits
      .filter((h) => h.relevance < 1)).toEqual([])
  })

  it("answers a question in Spanish about an English recording through its translation (Apertium installed)", async (context) => {
    if (!apertiumInstalled()) return context.skip()
    await until(keyA, "when is the tower painted", a, true)
    const { hits } = await search(keyA, { q: "¿Cuándo se pinta la torre del faro?" })
    expect(hits[0]!.job_id).toBe(a)
    expect(hits[0]!.relevance).toBeGreaterThanOrEqual(0.5)
    // The highlights are the translation's words found in the English text.
    const highlighted = hits[0]!.highlights.map(([s, e]) => hits[0]!.text.slice(s, e).toLowerCase())
    expect(highlighted).toEqual(expect.arrayContaining(["lighthouse", "tower"]))
  })

  it("never crosses accounts, not even with the other account's job id", async () => {
    await until(keyB, "where can I buy bread", b, true)
    expect(await found(keyB, "lighthouse keeper tower", a)).toBe(false)
    expect(await found(keyA, "sourdough bread bakery", b)).toBe(false)
    expect((await search(keyB, { q: "lighthouse keeper", job_ids: [a] })).hits).toEqual([])
    expect((await search(keyA, { q: "lighthouse keeper", job_ids: [a] })).hits.map((h) => h.job_id)).toEqual([a])
  })

  it("applies the filters: language, since/until (Unix seconds), limit", async () => {
    const now = Date.now() / 1000
    expect(await search(keyA, { q: "lighthouse keeper", language: "de" })).toMatchObject({ hits: [] })
    expect((await search(keyA, { q: "lighthouse keeper", language: "en" })).hits[0]!.job_id).toBe(a)
    expect((await search(keyA, { q: "lighthouse keeper", since: now + 60 })).hits).toEqual([])
    expect((await search(keyA, { q: "lighthouse keeper", until: now - 3600 })).hits).toEqual([])
    expect((await search(keyA, { q: "lighthouse keeper", since: now - 3600, until: now + 60 })).hits[0]!.job_id).toBe(a)
    expect((await search(keyA, { q: "lighthouse keeper", limit: 1 })).hits.length).toBe(1)
  })

  it("re-indexes after a correction: the old words are gone, the new ones found", async () => {
    const patch = await fetch(`${server.url}/v1/jobs/${a}/transcript`, {
      method: "PATCH",
      headers: { "X-API-Key": keyA, "Content-Type": "application/json" },
      body: JSON.stringify({ segments: [{ index: 0, text: harbour }] })
    })
    expect(patch.status).toBe(200)
    await eventually(async () => ((await indexedTexts(a)).join() === harbour ? true : undefined), "the corrected text indexed", 30_000, 200)
    const now = await search(keyA, { q: "who counts the fishing boats" })
    expect(now.hits[0]).toMatchObject({ job_id: a, text: harbour })
    // Semantic search always answers the nearest passages; none of them holds the old words.
    const old = await search(keyA, { q: "lighthouse keeper repaints the red tower" })
    expect(old.hits.filter((h) => /lighthouse|repaints/i.test(h.text))).toEqual([])
  })

  it("removes a deleted job, brings it back on restore, and removes it for good on purge", async () => {
    expect((await request(server, "DELETE", `/v1/jobs/${a}`, keyA)).status).toBe(204)
    expect(await found(keyA, "who counts the fishing boats", a)).toBe(false)
    await untilPassages(a, 0)

    expect((await request(server, "POST", `/v1/jobs/${a}/restore`, keyA)).status).toBe(200)
    await until(keyA, "who counts the fishing boats", a, true)
    expect(await indexedTexts(a)).toEqual([harbour])

    expect((await request(server, "DELETE", `/v1/jobs/${a}`, keyA)).status).toBe(204)
    await untilPassages(a, 0)
    await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE jobs SET deleted_at = deleted_at - interval '25 hours' WHERE id = ${a}`.pipe(Effect.orDie)
      // Passages left behind by hand: the purge event must clear them.
      yield* sql`INSERT INTO search_passages (account_id, job_id, kind, start, "end", speaker, text, moments, filename,
          language, ts_config, created_at, embedding)
        SELECT account_id, job_id, kind, start, "end", speaker, text, moments, filename, language, ts_config, created_at, embedding
        FROM search_passages WHERE job_id = ${b}`.pipe(Effect.orDie)
      yield* sql`UPDATE search_passages SET job_id = ${a} WHERE id IN (SELECT id FROM search_passages WHERE job_id = ${b}
        ORDER BY id DESC LIMIT 1)`.pipe(Effect.orDie)
    }))
    expect(await passagesOf(a)).toBe(1)
    await server.run(JobStore.use((store) => store.purgeExpired))
    await untilPassages(a, 0)
  })

  it("does not index keyless sample jobs", async () => {
    const sample = await submit(undefined, "sample.wav", { text: "The zeppelin hangar opens for visitors on Sundays." })
    await waitForJob(server, undefined, sample.job_id, undefined, { headers: { "X-Claim-Token": sample.claim_token ?? "" } })
    // An account job finished after it is indexed: by then the sample's event has been handled too.
    const later = (await submit(keyA, "later.wav", { text: "The zeppelin museum sells tickets online." })).job_id
    await waitForJob(server, keyA, later)
    await until(keyA, "zeppelin tickets", later, true)
    expect(await passagesOf(sample.job_id)).toBe(0)
  })

  it("hides locked jobs until they are unlocked", async () => {
    const id = (await submit(keyB, "locked.wav", { text: "The glacier retreated forty metres in a single summer." })).job_id
    await waitForJob(server, keyB, id)
    await until(keyB, "how fast is the ice melting", id, true)
    const setLocked = (locked: boolean) =>
      server.run(Effect.gen(function*() {
        yield* (yield* SqlClient.SqlClient)`UPDATE jobs SET locked = ${locked} WHERE id = ${id}`.pipe(Effect.orDie)
      }))
    await setLocked(true)
    expect(await found(keyB, "how fast is the ice melting", id)).toBe(false)
    await expectError(await request(server, "GET", `/v1/jobs/${id}/clips/search?q=glacier`, keyB), 402, "transcript_locked")
    await setLocked(false)
    expect(await found(keyB, "how fast is the ice melting", id)).toBe(true)
  })

  it("a locked job takes no place among the hits: a page of `limit` is filled with readable ones", async () => {
    const key = (await server.account()).key
    const strong = (await submit(key, "volcano-1.wav", { text: "The volcano erupted at dawn and ash covered the village." })).job_id
    const also = (await submit(key, "volcano-2.wav", { text: "Ash from the volcano eruption closed the airport at dawn." })).job_id
    const open = (await submit(key, "volcano-3.wav", { text: "Scientists measure the gases rising from the crater every week." })).job_id
    for (const id of [strong, also, open]) await waitForJob(server, key, id)
    const q = "the volcano erupted and ash covered the village"
    await until(key, q, open, true)
    const top = (await search(key, { q, limit: 2, min_relevance: 0 })).hits.map((h) => h.job_id)
    expect(top).toEqual([strong, also]) // the two best matches, before any is locked
    await server.run(Effect.gen(function*() {
      yield* (yield* SqlClient.SqlClient)`UPDATE jobs SET locked = true WHERE id IN (${strong}, ${also})`.pipe(Effect.orDie)
    }))
    const hits = (await search(key, { q, limit: 2, min_relevance: 0 })).hits
    expect(hits.length).toBeGreaterThan(0)
    expect(hits.every((h) => h.job_id === open)).toBe(true)
  })
})

describe("POST /v1/library/search refusals", () => {
  it("answers 422 for a q that is missing, empty, only spaces or over 500 characters, and for a bad limit or field", async () => {
    for (const body of [{}, { q: "" }, { q: "   " }, { q: "x".repeat(501) }, { q: "ok", limit: 0 }, { q: "ok", limit: 51 },
      { q: "ok", job_ids: ["not-a-uuid"] }, { q: "ok", language: "english" }, { q: 42 }]) {
      await expectError(await postJson(server, "/v1/library/search", body, keyA), 422, "VALIDATION_FAILED")
    }
    expect((await search(keyA, { q: "x".repeat(500) })).hits).toBeInstanceOf(Array)
  })

  it("answers 422 naming the field for a since or until that is no date (until -3.78e28 was a 500)", async () => {
    for (const [field, value] of [["until", -3.78e28], ["since", 3.78e28], ["until", 8.64e12 + 1], ["since", -1], ["until", 253402300800]] as const) {
      const body = await expectError(await postJson(server, "/v1/library/search", { q: "hello", [field]: value }, keyA), 422, "VALIDATION_FAILED")
      expect(body["detail"]).toEqual([{ loc: ["body", field], msg: expect.stringContaining("253402300799") }])
    }
    // The last second of year 9999 is still a date.
    expect((await search(keyA, { q: "hello", since: 0, until: 253402300799 })).hits).toBeInstanceOf(Array)
  })

  it("answers 401 without a key and 400 for a body that is not JSON", async () => {
    expect((await postJson(server, "/v1/library/search", { q: "bread" })).status).toBe(401)
    const response = await fetch(`${server.url}/v1/library/search`, {
      method: "POST",
      headers: { "X-API-Key": keyA, "Content-Type": "application/json" },
      body: "{not json"
    })
    await expectError(response, 400, "MALFORMED_JSON")
  })
})

describe("GET /v1/jobs/{job_id}/clips/search", () => {
  let id: string
  beforeAll(async () => {
    id = (await submit(keyA, "orchard.wav", { text: "We planted four hundred apple trees on the north slope of the orchard." })).job_id
    await waitForJob(server, keyA, id)
    await until(keyA, "how many trees were planted", id, true)
  }, 60_000)

  it("finds the matching moments inside the job only", async () => {
    const other = (await submit(keyA, "orchard-2.wav", { text: "Apple trees need pruning in late winter." })).job_id
    await waitForJob(server, keyA, other)
    await until(keyA, "when to prune apple trees", other, true)
    const response = await request(server, "GET", `/v1/jobs/${id}/clips/search?q=${encodeURIComponent("how many apple trees")}`, keyA)
    const text = await response.text()
    expect(response.status, text).toBe(200)
    const body = JSON.parse(text) as { moments: Array<Hit>; query_ms: number }
    expect(Object.keys(body).sort()).toEqual(["moments", "query_ms"])
    expect(body.moments.length).toBeGreaterThan(0)
    expect(body.moments.every((m) => m.job_id === id)).toBe(true)
    expect(body.moments[0]!.text).toContain("four hundred apple trees")
  })

  it("answers 404 across accounts, 400 for a bad id, 422 for a missing or too long q, 409 before the job is done", async () => {
    await expectError(await request(server, "GET", `/v1/jobs/${id}/clips/search?q=apple`, keyB), 404, "NOT_FOUND")
    await expectError(await request(server, "GET", `/v1/jobs/not-a-uuid/clips/search?q=apple`, keyA), 400, "BAD_ID")
    await expectError(await request(server, "GET", `/v1/jobs/${id}/clips/search`, keyA), 422, "VALIDATION_FAILED")
    await expectError(await request(server, "GET", `/v1/jobs/${id}/clips/search?q=${"x".repeat(501)}`, keyA), 422, "VALIDATION_FAILED")
    await expectError(await request(server, "GET", `/v1/jobs/${id}/clips/search?q=%20%20`, keyA), 422, "VALIDATION_FAILED")
    const slow = (await submit(keyA, "slow.wav", { text: "Not yet.", delayMs: 20_000, steps: 20 })).job_id
    await expectError(await request(server, "GET", `/v1/jobs/${slow}/clips/search?q=apple`, keyA), 409, "NOT_READY")
    await expectError(await request(server, "GET", `/v1/jobs/${slow}/clips/candidates`, keyA), 409, "NOT_READY")
    expect((await request(server, "DELETE", `/v1/jobs/${slow}`, keyA)).status).toBe(204)
  })
})
