/**
 * Speaker names on a real three-voice recording (`test/fixtures/panel`: two festival voices and
 * one espeak-ng voice), over a real socket with the real pipeline (whisper-tiny.en, the voice
 * encoder, MiniLM): the host introduces himself and a guest not yet speaking, the guest greets
 * him by first name, and a third voice answers "Tom, do your guests ever complain?" — a voice
 * named only by how the others address it. whisper-tiny.en mishears some of it ("Dr. Emma
 * Clark", "Amu, is there anything…" for "Emma, is there anything…"), which the names must
 * survive: the guest's introduction and first address outweigh the misheard one.
 *
 * Speakers are found by what they say (diarization labels are in order of first appearance,
 * but the test does not lean on that), so the assertions hold whatever label each voice gets.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Insights } from "../../src/contract/domain/Insights.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { accepted, request, submitFile, waitForJob } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"

const fixtureDir = path.resolve(import.meta.dirname, "../fixtures/panel")
const fixture = JSON.parse(fs.readFileSync(path.join(fixtureDir, "panel.json"), "utf8")) as {
  readonly file: string
  readonly names: Readonly<Record<string, string>>
}

const squash = (text: string) => text.toLowerCase().replace(/[^a-z ]+/g, " ").replace(/\s+/g, " ").trim()

describe("speaker names on a recorded panel", () => {
  let server: TestServer
  let key: string
  let id: string

  beforeAll(async () => {
    server = await startServer("panel-names", { rateLimitPerMinute: 10_000 })
    key = (await server.account()).key
    id = (await accepted(await submitFile(server, {
      key,
      file: { name: fixture.file, bytes: new Uint8Array(fs.readFileSync(path.join(fixtureDir, fixture.file))) },
      fields: { diarize: "true", word_timestamps: "true" }
    }))).job_id
    await waitForJob(server, key, id, undefined, { timeoutMs: 240_000, intervalMs: 500 })
  }, 300_000)
  afterAll(async () => {
    await server?.close()
  })

  it("names the host, the introduced guest and the voice addressed as Tom, each with evidence", async () => {
    const transcript = await (await request(server, "GET", `/v1/jobs/${id}/result?format=json`, key)).json() as Transcript
    /** The label of the voice that says `words`. */
    const voiceSaying = (words: string) => transcript.segments.find((s) => squash(s.text).includes(words))?.speaker
    const host = voiceSaying("i m martin hale")
    const guest = voiceSaying("hello martin")
    const porter = voiceSaying("all the time")
    // The precondition: three voices, told apart.
    expect(new Set([host, guest, porter]).size, JSON.stringify(transcript.segments)).toBe(3)

    const response = await request(server, "GET", `/v1/jobs/${id}/insights`, key)
    expect(response.status).toBe(200)
    const { insights } = await response.json() as { insights: Insights }
    const speaker = (label: string | null | undefined) => insights.speakers.find((s) => s.label === label)!
    expect(insights.speakers).toHaveLength(3)

    expect(speaker(host).name).toBe(fixture.names["A"])
    // Whisper may spell the surname its own way ("Clark"); the first name and the person are what count.
    expect(speaker(guest).name).toMatch(/^Emma Clarke?$/)
    const heard = transcript.segments.map((s) => `${s.speaker}: ${s.text}`).join("\n")
    expect(speaker(porter).name, heard).toBe(fixture.names["C"])
    expect(speaker(host).name_evidence.map((e) => e.kind)).toContain("self_introduction")
    expect(speaker(guest).name_evidence.map((e) => e.kind)).toEqual(expect.arrayContaining(["introduced", "addressed"]))
    expect(speaker(porter).name_evidence.map((e) => e.kind)).toContain("addressed")
    const spoken = squash(transcript.text)
    for (const s of insights.speakers) {
      expect(s.name_confidence).toBeGreaterThan(0)
      expect(s.name_confidence).toBeLessThanOrEqual(1)
      for (const e of s.name_evidence) {
        expect(spoken).toContain(squash(e.text))
        expect(e.start).toBeGreaterThanOrEqual(0)
      }
    }
    // The names reach the chapters (labels are replaced by names when known).
    expect(insights.chapters.flatMap((c) => c.speakers)).toContain(fixture.names["A"])
  })
})
