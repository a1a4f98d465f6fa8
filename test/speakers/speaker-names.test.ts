/**
 * Speaker names over real sockets: `GET`/`PATCH /v1/jobs/{job_id}/speakers`, and the names in
 * every place the brief lists — txt, srt, vtt and docx downloads, json segments
 * (`speaker_name`), insights (speakers[].name over a detected name, `speaker_name` of summary
 * sentences and quotes) and library search hits. Refusals: 422 with `detail` for unknown
 * labels and bad names, 404 for another account's job, 409 before the job is done. Answers are
 * checked against /openapi.json.
 *
 * The transcript is a stored, diarized one (saved over the stand-in pipeline's result as a
 * correction would be): recognition and diarization are not what this file is about. MiniLM
 * (real weights) makes the insights and the search index.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Insights } from "../../src/contract/domain/Insights.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { makeChecker } from "../contract/openApiCheck.ts"
import { docxText } from "../support/docx.ts"
import { accepted, eventually, expectError, postJson, request, submitFile, waitForJob } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"
import { interview, saveTranscript } from "./interview.ts"

const standIn = makeStandIn({ delayMs: 100, steps: 1 })
let server: TestServer
let keyA: string
let keyB: string
let checker: ReturnType<typeof makeChecker>

const submitDone = async (key: string, name: string, directive = {}) => {
  const id = (await accepted(await submitFile(server, { key, file: { name, bytes: tinyWav(directive) } }))).job_id
  return id
}

const speakersPath = (id: string) => `/v1/jobs/${id}/speakers`

const patch = (key: string, id: string, body: unknown) =>
  fetch(`${server.url}${speakersPath(id)}`, {
    method: "PATCH",
    headers: { "X-API-Key": key, "Content-Type": "application/json" },
    body: JSON.stringify(body)
  })

const checked = async (method: string, path: string, response: Response, status: number) => {
  const result = await checker.check(method, `${server.url}${path}`, response.clone())
  expect(result.status, JSON.stringify(result.body)).toBe(status)
  return result.body
}

const download = async (id: string, format: string) => {
  const response = await request(server, "GET", `/v1/jobs/${id}/result?format=${format}`, keyA)
  expect(response.status).toBe(200)
  return format === "docx" ? docxText(new Uint8Array(await response.arrayBuffer())) : await response.text()
}

const insightsOf = async (id: string): Promise<Insights> => {
  const response = await request(server, "GET", `/v1/jobs/${id}/insights`, keyA)
  const text = await response.text()
  expect(response.status, text).toBe(200)
  return (JSON.parse(text) as { insights: Insights }).insights
}

let job: string
let plain: string

beforeAll(async () => {
  server = await startServer("speaker-names", { rateLimitPerMinute: 10_000 }, { pipeline: standIn.layer })
  keyA = (await server.account()).key
  keyB = (await server.account()).key
  checker = makeChecker(await (await server.get("/openapi.json")).json())
  job = await submitDone(keyA, "interview.wav")
  plain = await submitDone(keyA, "memo.wav")
  await waitForJob(server, keyA, job)
  await waitForJob(server, keyA, plain)
  await saveTranscript(server, job, interview)
}, 60_000)
afterAll(async () => {
  await server?.close()
})

describe("naming a job's speakers", () => {
  it("lists the labels in order of first appearance, unnamed until insights or a person name them", async () => {
    const response = await request(server, "GET", speakersPath(job), keyA)
    expect(await checked("GET", speakersPath(job), response, 200)).toEqual({
      speakers: [{ label: "SPEAKER_00", name: null, source: null }, { label: "SPEAKER_01", name: null, source: null }]
    })
    // A transcript without diarization has no speakers.
    expect(await (await request(server, "GET", speakersPath(plain), keyA)).json()).toEqual({ speakers: [] })
  })

  it("shows names the insights detected as `detected`", async () => {
    const insights = await insightsOf(job)
    const detected = Object.fromEntries(insights.speakers.map((s) => [s.label, s.name]))
    expect(detected).toEqual({ SPEAKER_00: "Martin Hale", SPEAKER_01: "Emma" })
    expect(await (await request(server, "GET", speakersPath(job), keyA)).json()).toEqual({
      speakers: [
        { label: "SPEAKER_00", name: "Martin Hale", source: "detected" },
        { label: "SPEAKER_01", name: "Emma", source: "detected" }
      ]
    })
  }, 60_000)

  it("renames: the answer, txt, srt, vtt, docx and json carry the name", async () => {
    const response = await patch(keyA, job, { names: { SPEAKER_00: "  Ana Lopez ", SPEAKER_01: "Tom <b> & co" } })
    expect(await checked("PATCH", speakersPath(job), response, 200)).toEqual({
      speakers: [
        { label: "SPEAKER_00", name: "Ana Lopez", source: "user" },
        { label: "SPEAKER_01", name: "Tom <b> & co", source: "user" }
      ]
    })

    const txt = await download(job, "txt")
    expect(txt).toContain("Ana Lopez: Welcome back to the coastal show.")
    expect(txt).toContain("Tom <b> & co: Thank you, Martin.")
    expect(txt).not.toContain("SPEAKER_0")

    const srt = await download(job, "srt")
    expect(srt).toContain("Ana Lopez: Welcome back to the coastal show.")
    expect(srt).toContain("Tom <b> & co: About forty fishing boats")
    expect(srt).not.toContain("SPEAKER_0")

    const vtt = await download(job, "vtt")
    expect(vtt).toContain("<v Ana Lopez>Welcome back to the coastal show")
    expect(vtt).toContain("<v Tom &lt;b&gt; &amp; co>About forty fishing boats")
    expect(vtt).not.toContain("SPEAKER_0")

    const docx = await download(job, "docx")
    expect(docx).toContain("[00:00] Ana Lopez: Welcome back to the coastal show.")
    expect(docx).toContain("[00:09] Tom <b> & co: Thank you, Martin.")
    expect(docx).not.toContain("SPEAKER_0")

    const jsonResponse = await request(server, "GET", `/v1/jobs/${job}/result`, keyA)
    const json = await checked("GET", `/v1/jobs/${job}/result`, jsonResponse, 200) as Transcript
    expect(json.segments.map((s) => [s.speaker, s.speaker_name])).toEqual([
      ["SPEAKER_00", "Ana Lopez"],
      ["SPEAKER_00", "Ana Lopez"],
      ["SPEAKER_01", "Tom <b> & co"],
      ["SPEAKER_00", "Ana Lopez"],
      ["SPEAKER_01", "Tom <b> & co"]
    ])
    // Without diarization nothing changes: no speaker, no speaker_name.
    const memo = await (await request(server, "GET", `/v1/jobs/${plain}/result`, keyA)).json() as Transcript
    expect(memo.segments.every((s) => s.speaker === null && !("speaker_name" in s))).toBe(true)
  })

  it("insights show the person's name over the detected one, without being made again", async () => {
    const generatedBefore = server.logs.filter((l) => l.includes("insights generated") && l.includes(job)).length
    const insights = await insightsOf(job)
    expect(insights.speakers.map((s) => [s.label, s.name])).toEqual([["SPEAKER_00", "Ana Lopez"], ["SPEAKER_01", "Tom <b> & co"]])
    for (const s of insights.speakers) {
      expect(s.name_confidence).toBeNull()
      expect(s.name_evidence).toEqual([])
    }
    const sentences = [...insights.summary.sentences, ...insights.quotes]
    expect(sentences.length).toBeGreaterThan(0)
    for (const s of sentences) {
      expect(s.speaker_name).toBe(s.speaker === "SPEAKER_00" ? "Ana Lopez" : "Tom <b> & co")
    }
    for (const chapter of insights.chapters) {
      for (const name of chapter.speakers) expect(["Ana Lopez", "Tom <b> & co"]).toContain(name)
    }
    expect(server.logs.filter((l) => l.includes("insights generated") && l.includes(job)).length).toBe(generatedBefore)
  })

  it("search hits carry the speaker's name", async () => {
    const hit = await eventually(async () => {
      const response = await postJson(server, "/v1/library/search", { q: "how often is the lighthouse repainted", job_ids: [job] }, keyA)
      const body = await response.json() as { hits: Array<{ text: string; speaker: string; speaker_name: string | null }> }
      return body.hits.find((h) => h.text.includes("repaint"))
    }, "the job indexed", 30_000, 200)
    expect(hit).toMatchObject({ speaker: "SPEAKER_01", speaker_name: "Tom <b> & co" })
    const clipSearch = await request(server, "GET", `/v1/jobs/${job}/clips/search?q=${encodeURIComponent("fishing boats at dawn")}`, keyA)
    const moments = (await checked("GET", `/v1/jobs/${job}/clips/search?q=x`, clipSearch, 200) as { moments: Array<{ speaker: string; speaker_name: string }> }).moments
    expect(moments.length).toBeGreaterThan(0)
    for (const m of moments) expect(m.speaker_name).toBe(m.speaker === "SPEAKER_00" ? "Ana Lopez" : "Tom <b> & co")
  }, 60_000)

  it("null forgets a name; labels not given keep theirs; the detected name shows again", async () => {
    const response = await patch(keyA, job, { names: { SPEAKER_00: null } })
    expect(await response.json()).toEqual({
      speakers: [
        { label: "SPEAKER_00", name: "Martin Hale", source: "detected" },
        { label: "SPEAKER_01", name: "Tom <b> & co", source: "user" }
      ]
    })
    const txt = await download(job, "txt")
    expect(txt).toContain("SPEAKER_00: Welcome back to the coastal show.")
    expect(txt).toContain("Tom <b> & co: Thank you, Martin.")
    const insights = await insightsOf(job)
    expect(insights.speakers.map((s) => s.name)).toEqual(["Martin Hale", "Tom <b> & co"])
    expect(insights.speakers[0]!.name_confidence).not.toBeNull()
  })

  it("422 with detail: a label the transcript does not have, bad names", async () => {
    const unknown = await patch(keyA, job, { names: { SPEAKER_07: "Zoe", SPEAKER_00: "Ana" } })
    await checked("PATCH", speakersPath(job), unknown.clone(), 422)
    const body = await expectError(unknown, 422, "VALIDATION_FAILED")
    expect(body["detail"]).toEqual([{ loc: ["body", "names", "SPEAKER_07"], msg: "No such speaker in the transcript" }])
    expect(body["error"]).toContain("SPEAKER_00, SPEAKER_01")
    // Nothing of a refused request is applied.
    expect((await (await request(server, "GET", speakersPath(job), keyA)).json() as { speakers: Array<{ name: string }> }).speakers[0]!.name).toBe("Martin Hale")

    const noSpeakers = await expectError(await patch(keyA, plain, { names: { SPEAKER_00: "Ana" } }), 422, "VALIDATION_FAILED")
    expect(noSpeakers["error"]).toContain("not diarized")

    for (const bad of ["", "   ", "x".repeat(81), "Ana\nLopez", "Tab\there", "Bell\u0007"]) {
      const refused = await patch(keyA, job, { names: { SPEAKER_00: bad } })
      await checked("PATCH", speakersPath(job), refused.clone(), 422)
      const issue = await expectError(refused, 422, "VALIDATION_FAILED")
      expect((issue["detail"] as Array<{ loc: Array<string> }>)[0]!.loc, JSON.stringify(bad)).toEqual(["body", "names", "SPEAKER_00"])
    }
    expect((await patch(keyA, job, { names: { SPEAKER_00: "x".repeat(80) } })).status).toBe(200)
    await expectError(await patch(keyA, job, { names: ["Ana"] }), 422, "VALIDATION_FAILED")
    await expectError(await patch(keyA, job, {}), 422, "VALIDATION_FAILED")
  })

  it("another account's job is 404; a job not done is 409 NOT_READY; no key is 401", async () => {
    const get = await request(server, "GET", speakersPath(job), keyB)
    await checked("GET", speakersPath(job), get.clone(), 404)
    await expectError(get, 404, "NOT_FOUND")
    await expectError(await patch(keyB, job, { names: { SPEAKER_00: "Mallory" } }), 404, "NOT_FOUND")
    expect((await (await request(server, "GET", speakersPath(job), keyA)).json() as { speakers: Array<{ name: string }> }).speakers[0]!.name)
      .toBe("x".repeat(80))

    // Progress every half second, so the DELETE below stops it at once and frees the runner for the next test's job.
    const running = await submitDone(keyA, "long.wav", { delayMs: 20_000, steps: 40 })
    await expectError(await request(server, "GET", speakersPath(running), keyA), 409, "NOT_READY")
    await expectError(await patch(keyA, running, { names: { SPEAKER_00: "Ana" } }), 409, "NOT_READY")
    await request(server, "DELETE", `/v1/jobs/${running}`, keyA)

    await expectError(await request(server, "GET", speakersPath(job)), 401, "MISSING_API_KEY")
  })

  it("a keyless sample is read with its claim token, as its transcript is", async () => {
    const sample = await accepted(await submitFile(server, { file: { name: "sample.wav", bytes: tinyWav() } }))
    const claim = { "X-Claim-Token": sample.claim_token! }
    await waitForJob(server, undefined, sample.job_id, undefined, { headers: claim })
    const listed = await request(server, "GET", speakersPath(sample.job_id), undefined, claim)
    expect(await checked("GET", speakersPath(sample.job_id), listed, 200)).toEqual({ speakers: [] })
    const wrong = await request(server, "GET", speakersPath(sample.job_id), undefined, { "X-Claim-Token": "not-it" })
    expect(wrong.status).toBe(401)
    await expectError(await request(server, "GET", speakersPath(sample.job_id)), 401, "MISSING_API_KEY")
  })
})
