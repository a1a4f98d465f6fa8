/**
 * `verbatim transcribe` and `verbatim models` as a user runs them (real processes, real weights).
 * A file the API refuses (415 BAD_MIME) or fails (NO_AUDIO) gets the API's code and sentence from
 * the CLI too, never ffmpeg's own wording, on both ffmpeg builds.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accepted, expectError, submitFile, waitForJob } from "../support/jobsClient.ts"
import { nativeFfmpegRuns } from "../support/nativeFfmpeg.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { runCli } from "../support/process.ts"
import { startServer, type TestServer } from "../support/server.ts"

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

describe("the CLI and the server say the same about a bad file", () => {
  let server: TestServer
  let key: string
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-cli-bad-"))
  const badFiles: Record<string, Uint8Array> = {
    "empty.mp3": new Uint8Array(0),
    "notes.wav": new TextEncoder().encode("Meeting notes: budget, hiring plan.\n"),
    "x01.mp4": fs.readFileSync(path.join(mediaDir, "x01_video_no_audio.mp4")),
    "x02.mp3": fs.readFileSync(path.join(mediaDir, "x02_corrupt.mp3"))
  }
  for (const [name, bytes] of Object.entries(badFiles)) fs.writeFileSync(path.join(scratch, name), bytes)

  beforeAll(async () => {
    server = await startServer("cli-bad-files", { workers: 1 })
    key = (await server.account()).key
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    fs.rmSync(scratch, { recursive: true, force: true })
  })

  /** The server's code and sentence: a 415 before a job, or the failed job's error. */
  const serverSays = async (name: string) => {
    const response = await submitFile(server, { key, file: { name, bytes: badFiles[name]!, type: "application/octet-stream" } })
    if (response.status !== 202) {
      const body = await expectError(response, 415, "BAD_MIME")
      return { code: "BAD_MIME", error: body["error"] as string }
    }
    const job = await waitForJob(server, key, (await accepted(response)).job_id, undefined, { timeoutMs: 60_000 })
    expect(job.status).toBe("failed")
    return { code: job.error_code, error: job.error }
  }

  const cliSays = async (name: string, decoder: string) => {
    const result = await runCli(["transcribe", path.join(scratch, name), "--json"], { ...env, VERBATIM_DECODER: decoder })
    expect(result.code).toBe(1)
    const summary = JSON.parse(result.stdout) as { results: Array<{ code: string; error: string }> }
    expect(result.stderr).toContain(`${summary.results[0]!.error} (${summary.results[0]!.code})`)
    return { code: summary.results[0]!.code, error: summary.results[0]!.error }
  }

  const expected: Record<string, { readonly code: string; readonly error: RegExp }> = {
    "empty.mp3": { code: "BAD_MIME", error: /^The file is empty \(0 bytes\), not audio or video\.$/ },
    "notes.wav": { code: "BAD_MIME", error: /^The file's content is text, not audio or video\.$/ },
    "x01.mp4": { code: "NO_AUDIO", error: /^The file has no usable audio: it has no audio stream \(a video without sound\?\)\.$/ },
    "x02.mp3": { code: "NO_AUDIO", error: /^The file has no usable audio: its content is not audio or video that can be read/ }
  }

  it("for an empty file, text, a video without sound and random bytes (WASM ffmpeg)", async () => {
    for (const name of Object.keys(badFiles)) {
      const fromServer = await serverSays(name)
      expect(fromServer.code, name).toBe(expected[name]!.code)
      expect(fromServer.error, name).toMatch(expected[name]!.error)
      expect(await cliSays(name, "wasm"), name).toEqual(fromServer)
    }
  }, 240_000)

  it.runIf(nativeFfmpegRuns("CLI bad files (native ffmpeg)"))("the same words with the native ffmpeg", async () => {
    for (const name of Object.keys(badFiles)) {
      const said = await cliSays(name, "native")
      expect(said.code, name).toBe(expected[name]!.code)
      expect(said.error, name).toMatch(expected[name]!.error)
    }
  }, 240_000)
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
