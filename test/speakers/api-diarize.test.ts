/**
 * Jobs submitted with `diarize=true` over a real socket, with the real pipeline (WASM decoder,
 * Silero VAD, whisper-tiny.en, the voice encoder in the pipeline worker): speakers land in the
 * json result per segment and per word, segments are split at a change of speaker, and the job
 * says `diarization: "done"`. A second server whose models folder has no voice encoder shows
 * the failure path: the job still ends done with the transcript, without speakers, and says
 * `diarization: "failed"`; it is charged once.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Billing } from "../../services/billing/Billing.ts"
import { billableMinutes } from "../../src/contract/domain/Catalog.ts"
import { type AccountId, JobId } from "../../src/contract/domain/Ids.ts"
import { TaskHandlers } from "../../services/work/TaskHandlers.ts"
import { accepted, getJob, request, sleep, submitFile, waitForJob } from "../support/jobsClient.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"

interface Result {
  readonly text: string
  readonly segments: ReadonlyArray<{
    readonly start: number
    readonly end: number
    readonly text: string
    readonly speaker: string | null
    readonly words?: ReadonlyArray<{ readonly start: number; readonly end: number; readonly text: string; readonly speaker?: string | null }>
  }>
}

const submit = async (server: TestServer, key: string, file: string, diarize = true) =>
  (await accepted(await submitFile(server, {
    key,
    file: { name: file, bytes: new Uint8Array(fs.readFileSync(path.join(mediaDir, file))) },
    fields: { diarize: String(diarize), word_timestamps: "true" }
  }))).job_id

const result = async (server: TestServer, key: string, id: string): Promise<Result> => {
  const response = await request(server, "GET", `/v1/jobs/${id}/result?format=json`, key)
  expect(response.status).toBe(200)
  return await response.json() as Result
}

const speakersOf = (r: Result) => [...new Set(r.segments.map((s) => s.speaker))]

const done = (server: TestServer, key: string, id: string) =>
  waitForJob(server, key, id, undefined, { timeoutMs: 240_000, intervalMs: 500 })

describe("diarize=true with the real pipeline", () => {
  let server: TestServer
  let key: string
  let accountId: AccountId
  const jobs: Record<string, string> = {}

  beforeAll(async () => {
    server = await startServer("speakers", { rateLimitPerMinute: 10_000 })
    const account = await server.account()
    key = account.key
    accountId = account.accountId
    jobs["a05"] = await submit(server, key, "a05_dialogue_slt_kal.wav")
    jobs["a08"] = await submit(server, key, "a08_interview_three_speakers.wav")
    jobs["a01"] = await submit(server, key, "a01_slt_budget.wav")
    jobs["plain"] = await submit(server, key, "a05_dialogue_slt_kal.wav", false)
    jobs["stalled"] = await submit(server, key, "a08_interview_three_speakers.wav")
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("a05 (two voices): 2 speakers, segments split where the speaker changes, words labelled", async () => {
    const job = await done(server, key, jobs["a05"]!)
    expect(job).toMatchObject({ status: "done", diarization: "done" })
    const r = await result(server, key, jobs["a05"]!)
    expect(speakersOf(r)).toEqual(["SPEAKER_00", "SPEAKER_01"])
    // A → B → A: the speaker changes at least twice along the segments.
    const changes = r.segments.filter((s, i) => i > 0 && s.speaker !== r.segments[i - 1]!.speaker).length
    expect(changes).toBeGreaterThanOrEqual(2)
    for (const segment of r.segments) {
      expect(segment.words!.length).toBeGreaterThan(0)
      // A segment holds one speaker's words only: split at every change.
      for (const word of segment.words!) expect(word.speaker).toBe(segment.speaker)
    }
    // The manifest's turns: A until ~5.1 s, B from ~6.0 s to ~11.9 s, A again from ~13.2 s.
    const at = (t: number) => r.segments.find((s) => s.start <= t && t <= s.end)?.speaker
    expect(at(3)).toBe("SPEAKER_00")
    expect(at(9)).toBe("SPEAKER_01")
    expect(at(16)).toBe("SPEAKER_00")
  })

  it("a08 (three voices): 3 speakers in order of first appearance", async () => {
    const job = await done(server, key, jobs["a08"]!)
    expect(job).toMatchObject({ status: "done", diarization: "done" })
    const r = await result(server, key, jobs["a08"]!)
    expect(speakersOf(r)).toEqual(["SPEAKER_00", "SPEAKER_01", "SPEAKER_02"])
  })

  it("a single voice (a01): 1 speaker", async () => {
    const job = await done(server, key, jobs["a01"]!)
    expect(job).toMatchObject({ status: "done", diarization: "done" })
    expect(speakersOf(await result(server, key, jobs["a01"]!))).toEqual(["SPEAKER_00"])
  })

  it("a diarization the engine gives up (stalled) completes the job without speakers; the late run writes nothing", async () => {
    const id = jobs["stalled"]!
    // Transcription reports at most 98 %; the diarize run's heartbeat writes 99.
    const diarizing = await waitForJob(server, key, id, (job) => job.progress >= 99 || job.status === "done" || job.status === "failed", {
      timeoutMs: 240_000,
      intervalMs: 100
    })
    expect(diarizing).toMatchObject({ status: "processing", diarization: "pending" })
    const before = await server.run(Billing.use((billing) => billing.balanceMinutes(accountId)))
    await server.run(TaskHandlers.use((registered) =>
      registered.handlers.get("diarize")!.giveUp({ taskId: "", jobId: JobId.make(id), subKey: "", attempts: 1 }, "stalled")
    ))
    const job = await getJob(server, key, id)
    expect(job).toMatchObject({ status: "done", diarization: "failed" })
    const r = await result(server, key, id)
    expect(r.segments.length).toBeGreaterThan(0)
    expect(speakersOf(r)).toEqual([null])
    // The attempt still diarizing lost its claim: it stops without completing the job again.
    await sleep(8_000)
    expect(speakersOf(await result(server, key, id))).toEqual([null])
    const after = await server.run(Billing.use((billing) => billing.balanceMinutes(accountId)))
    expect(before - after).toBeCloseTo(billableMinutes(job.audio_duration_seconds!), 6)
  })

  it("without diarize: no speakers, diarization null", async () => {
    const job = await done(server, key, jobs["plain"]!)
    expect(job).toMatchObject({ status: "done", diarization: null })
    const r = await result(server, key, jobs["plain"]!)
    expect(speakersOf(r)).toEqual([null])
    for (const segment of r.segments) for (const word of segment.words ?? []) expect(word.speaker).toBeUndefined()
  })
})

describe("diarization that cannot run", () => {
  let server: TestServer
  let key: string
  let accountId: AccountId
  let models: string

  beforeAll(async () => {
    // The models folder of this server has everything but the voice encoder.
    models = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-no-voice-"))
    for (const entry of fs.readdirSync(modelsDir)) {
      if (entry !== "voice-encoder") fs.symlinkSync(path.join(modelsDir, entry), path.join(models, entry))
    }
    server = await startServer("speakers-failed", { rateLimitPerMinute: 10_000, modelsDir: models })
    const account = await server.account()
    key = account.key
    accountId = account.accountId
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    fs.rmSync(models, { recursive: true, force: true })
  })

  it("completes the job with the transcript, without speakers, diarization failed, charged once", async () => {
    const before = await server.run(Billing.use((billing) => billing.balanceMinutes(accountId)))
    const id = await submit(server, key, "a05_dialogue_slt_kal.wav")
    const job = await done(server, key, id)
    expect(job).toMatchObject({ status: "done", diarization: "failed", speech_detected: true })
    const r = await result(server, key, id)
    expect(r.text.toLowerCase()).toMatch(/\w+/)
    expect(r.segments.length).toBeGreaterThan(0)
    expect(speakersOf(r)).toEqual([null])
    const after = await server.run(Billing.use((billing) => billing.balanceMinutes(accountId)))
    expect(before - after).toBeCloseTo(billableMinutes(job.audio_duration_seconds!), 6)
    expect((await getJob(server, key, id)).diarization).toBe("failed")
  })
})
