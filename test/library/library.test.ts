/**
 * The embeddable library as a consumer imports it (`from "verbatim"`, the package's own
 * `exports`), on the real pipeline with whisper-tiny.en: the Promise API transcribes a file
 * (with progress) and a buffer, renders every format, makes insights; the Effect API runs through `layer`;
 * a file without audio fails with `NoAudioInFile`. The two examples run as scripts (one
 * diarizes a dialogue held in a buffer).
 */
import { Effect, Exit } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createVerbatim, layer, Verbatim } from "verbatim"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { repoRoot } from "../support/process.ts"

const clip = path.join(mediaDir, "a01_slt_budget.wav")
const verbatim = createVerbatim({ model: "whisper-tiny.en", modelsDir, decoder: "wasm" })
afterAll(() => verbatim.close())

describe("Promise API", () => {
  it("transcribes a file with progress and renders every format", async () => {
    const progress: Array<number> = []
    const result = await verbatim.transcribe(clip, { words: true, onProgress: (p) => progress.push(p) })
    expect(result.transcript.text.toLowerCase()).toMatch(/good morning.*budget/)
    expect(result.durationSeconds).toBeGreaterThan(5)
    expect(result.speechDetected).toBe(true)
    expect(progress.length).toBeGreaterThan(1)
    expect(progress.at(-1)).toBeLessThanOrEqual(100)
    expect(result.transcript.segments[0]!.words!.length).toBeGreaterThan(0)

    expect(await verbatim.render(result.transcript, "srt")).toMatch(/^1\r?\n00:00:0\d,\d{3} --> /)
    expect(await verbatim.render(result.transcript, "vtt")).toMatch(/^WEBVTT/)
    expect(await verbatim.render(result.transcript, "txt")).toMatch(/good morning/i)
    expect(JSON.parse(await verbatim.render(result.transcript, "json")).segments.length).toBeGreaterThan(0)
    const docx = await verbatim.render(result.transcript, "docx")
    expect(Buffer.from(docx.subarray(0, 2)).toString()).toBe("PK")
  }, 120_000)

  it("transcribes a buffer", async () => {
    const result = await verbatim.transcribe(fs.readFileSync(clip), { filename: "clip.wav", maxSeconds: 4 })
    expect(result.transcript.text.toLowerCase()).toContain("good morning")
    expect(result.transcript.segments.every((segment) => segment.start < 4)).toBe(true)
  }, 120_000)

  it("makes insights of a transcript, sized to a short one, and refuses one without speech", async () => {
    const interview = await verbatim.transcribe(path.join(mediaDir, "a08_interview_three_speakers.wav"))
    const insights = await verbatim.insights(interview.transcript)
    expect(insights.summary).toBeDefined()
    expect(insights.chapters.length).toBeGreaterThan(0)
    // A memo of a sentence or two is speech: its summary is those sentences.
    const short = await verbatim.transcribe(clip)
    const memo = await verbatim.insights(short.transcript)
    expect(memo.summary.sentences.length).toBeGreaterThan(0)
    expect(memo.summary.sentences.length).toBeLessThanOrEqual(3)
    const silence = await verbatim.transcribe(path.join(mediaDir, "n01_silence.wav"))
    await expect(verbatim.insights(silence.transcript)).rejects.toThrow()
  }, 180_000)

  it("rejects a file without audio", async () => {
    const noise = Buffer.from("this is not a recording at all, just text")
    await expect(verbatim.transcribe(noise, { filename: "notes.wav" })).rejects.toThrow()
  }, 60_000)
})

describe("Effect API", () => {
  it("runs through layer() and the Verbatim service; failures are typed", async () => {
    const program = Effect.gen(function*() {
      const service = yield* Verbatim
      const ok = yield* service.transcribe(clip, { maxSeconds: 3 })
      const bad = yield* Effect.exit(service.transcribe(Buffer.from("not audio"), { filename: "x.wav" }))
      return { ok, bad }
    })
    const { ok, bad } = await Effect.runPromise(
      program.pipe(Effect.provide(layer({ model: "whisper-tiny.en", modelsDir, decoder: "wasm" })))
    )
    expect(ok.transcript.text.toLowerCase()).toContain("good morning")
    expect(Exit.isFailure(bad)).toBe(true)
    if (Exit.isFailure(bad)) expect(String(bad.cause)).toContain("NoAudioInFile")
  }, 120_000)
})

describe("examples", () => {
  it("examples/transcribe-file.ts prints SRT", () => {
    const run = spawnSync(process.execPath, ["examples/transcribe-file.ts", clip], { cwd: repoRoot, encoding: "utf8", timeout: 120_000 })
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/^1\r?\n00:00:0\d,\d{3} --> /)
  }, 130_000)

  it("examples/effect-layer.ts labels two speakers in a dialogue (buffer input, diarize)", () => {
    const dialogue = path.join(mediaDir, "a05_dialogue_slt_kal.wav")
    const run = spawnSync(process.execPath, ["examples/effect-layer.ts", dialogue], { cwd: repoRoot, encoding: "utf8", timeout: 120_000 })
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout).toContain("SPEAKER_00")
    expect(run.stdout).toContain("SPEAKER_01")
    expect(run.stdout).toContain("WEBVTT")
  }, 130_000)
})
