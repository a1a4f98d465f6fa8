/** `verbatim transcribe` and `verbatim models` as a user runs them (real processes, real weights). */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { runCli } from "../support/process.ts"

const env = { VERBATIM_MODELS_DIR: modelsDir, VERBATIM_MODEL: "whisper-tiny.en", VERBATIM_DECODER: "wasm" }

describe("verbatim transcribe", () => {
  it("writes a WebVTT transcript of a video file with a progress bar on stderr", async () => {
    const result = await runCli(["transcribe", path.join(mediaDir, "f05_podcast_video.mp4"), "--format", "vtt"], env)
    expect(result.code).toBe(0)
    expect(result.stdout.startsWith("WEBVTT")).toBe(true)
    expect(result.stdout.toLowerCase()).toContain("small towns")
    expect(result.stdout).toMatch(/\d\d:\d\d:\d\d\.\d\d\d --> \d\d:\d\d:\d\d\.\d\d\d/)
    expect(result.stderr).toContain("100%")
    expect(result.stderr).toMatch(/language en/)
  })

  it("writes json with word times to --out", async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-cli-")), "a01.json")
    const result = await runCli(
      ["transcribe", path.join(mediaDir, "a01_slt_budget.wav"), "--format", "json", "--words", "--out", out],
      env
    )
    expect(result.code).toBe(0)
    const transcript = JSON.parse(fs.readFileSync(out, "utf8")) as { text: string; segments: Array<{ words?: Array<unknown> }> }
    expect(transcript.text.toLowerCase()).toContain("hiring plan")
    expect(transcript.segments.flatMap((s) => s.words ?? []).length).toBeGreaterThan(15)
  })

  it("fails a file without audio with exit code 1 and a reason", async () => {
    const result = await runCli(["transcribe", path.join(mediaDir, "x01_video_no_audio.mp4")], env)
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/verbatim: .*(audio|stream)/i)
  })
})

describe("verbatim models", () => {
  it("lists the models and whether they are on disk", async () => {
    const result = await runCli(["models", "list"], env)
    expect(result.code).toBe(0)
    const rows = JSON.parse(result.stdout) as Array<{ name: string; present: boolean; default: boolean }>
    expect(rows).toContainEqual(expect.objectContaining({ name: "whisper-base", present: true }))
    expect(rows).toContainEqual(expect.objectContaining({ name: "whisper-tiny.en", present: true, default: true }))
  })

  it("reports a model that cannot be downloaded, naming it", async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-models-"))
    const result = await runCli(["models", "pull", "whisper-tiny.en"], {
      ...env,
      VERBATIM_MODELS_DIR: empty,
      VERBATIM_MODELS_URL: "http://127.0.0.1:1"
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/whisper-tiny\.en|config\.json/)
    const unknown = await runCli(["models", "pull", "whisper-huge"], env)
    expect(unknown.code).toBe(1)
  })
})
