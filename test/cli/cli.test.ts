/**
 * The `verbatim` command as a user runs it (real processes): `--help` on every level, exit
 * status 2 for a wrong command line, `doctor` (all well; a missing model and a busy port
 * named with what to do; `--json`; a running server checked through its `/readyz`), the
 * insights help naming what insights hold, and `transcribe` with several inputs, a link, speakers,
 * insights and a JSON summary, where one bad input fails the run (exit 1) but not the others.
 */
import { Effect, Exit, Scope } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { respond, startTestServer, type TestServer as LinkServer } from "../support/linkTestServer.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { freePort } from "../support/ports.ts"
import { runCli, startServerProcess } from "../support/process.ts"
import { Insights } from "../../src/contract/domain/Insights.ts"
import { InsightsTool } from "../../src/contract/mcp/McpTools.ts"

const scope = Effect.runSync(Scope.make())
let links: LinkServer
let dataDir: string
let env: Record<string, string>

beforeAll(async () => {
  links = await Effect.runPromise(Scope.provide(scope)(startTestServer({
    "/episode.wav": respond(200, { "content-type": "audio/wav" }, fs.readFileSync(path.join(mediaDir, "a02_kal_weather.wav")))
  })))
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-cli-"))
  env = {
    VERBATIM_MODELS_DIR: modelsDir,
    VERBATIM_MODEL: "whisper-tiny.en",
    VERBATIM_DECODER: "wasm",
    VERBATIM_DATA_DIR: dataDir,
    VERBATIM_PORT: String(await freePort()),
    VERBATIM_RUNNER_PORT: String(await freePort()),
    VERBATIM_FETCH_ALLOW: `127.0.0.1:${links.port}`
  }
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
})

describe("one style for every command", () => {
  it("answers --help on every level", async () => {
    for (const args of [[], ["admin"], ["admin", "key"], ["transcribe"], ["models"], ["models", "pull"], ["doctor"], ["serve"]]) {
      const result = await runCli([...args, "--help"], env)
      expect(result.code, args.join(" ")).toBe(0)
      expect(result.stdout).toContain("USAGE")
    }
  })

  it("exits 2 on a wrong command line", async () => {
    const unknown = await runCli(["transcibe", "x.wav"], env)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("invalid command line")
    expect((await runCli(["transcribe"], env)).code).toBe(2)
    expect((await runCli(["transcribe", "a.wav", "--format", "pdf"], env)).code).toBe(2)
  })
})

describe("verbatim doctor", () => {
  it("passes on a working setup and reports every check as JSON", async () => {
    const result = await runCli(["doctor", "--json"], env)
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout) as { ok: boolean; checks: Array<{ check: string; ok: boolean; detail: string }> }
    expect(report.ok).toBe(true)
    const names = report.checks.map((c) => c.check)
    expect(names).toEqual(expect.arrayContaining(["ffmpeg", "model whisper-tiny.en", "model whisper-base", "database", "disk"]))
    expect(report.checks.find((c) => c.check === "database")!.detail).toMatch(/(\d+) of \1 migrations applied/)
    expect(report.checks.find((c) => c.check === "model whisper-tiny.en")!.detail).toContain("checksums match")
  }, 120_000)

  it("names a missing model and a busy port, with what to do, and exits 1", async () => {
    const busy = net.createServer()
    const port = await freePort()
    await new Promise<void>((resolve) => busy.listen({ host: "127.0.0.1", port }, () => resolve()))
    try {
      const emptyModels = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-nomodels-"))
      const result = await runCli(["doctor"], { ...env, VERBATIM_MODELS_DIR: emptyModels, VERBATIM_PORT: String(port) })
      expect(result.code).toBe(1)
      expect(result.stdout).toMatch(/FAIL\s+model whisper-tiny\.en\s+config\.json missing/)
      expect(result.stdout).toContain("→ verbatim models pull whisper-tiny.en")
      expect(result.stdout).toMatch(new RegExp(`FAIL\\s+port ${port}\\s+API port on 127\\.0\\.0\\.1: EADDRINUSE`))
      expect(result.stdout).toContain("set VERBATIM_PORT")
      expect(result.stdout).toContain("Some checks failed")
    } finally {
      busy.close()
    }
  }, 120_000)
})

describe("verbatim doctor while the server runs", () => {
  it("checks the running service (ready, database, models) instead of failing on its busy port", async () => {
    const server = await startServerProcess({
      ...env,
      VERBATIM_PORT: env["VERBATIM_PORT"]!,
      VERBATIM_RUNNER_PORT: env["VERBATIM_RUNNER_PORT"]!
    })
    try {
      const result = await runCli(["doctor", "--json"], env)
      const report = JSON.parse(result.stdout) as { ok: boolean; checks: Array<{ check: string; ok: boolean; detail: string }> }
      expect(result.code, result.stdout).toBe(0)
      expect(report.ok).toBe(true)
      const byName = new Map(report.checks.map((c) => [c.check, c]))
      expect(byName.get("service")?.detail).toBe(`Verbatim is running at ${server.url} and ready`)
      expect(byName.get("service database")).toMatchObject({ ok: true, detail: "reachable" })
      expect(byName.get("service models")).toMatchObject({ ok: true, detail: "whisper-tiny.en present" })
      expect(byName.get(`port ${env["VERBATIM_PORT"]}`)).toMatchObject({ ok: true })
      expect(byName.get(`port ${env["VERBATIM_PORT"]}`)?.detail).toContain("in use, as expected while Verbatim runs")
      expect(byName.get("database")?.ok).toBe(true)
    } finally {
      await server.stop()
    }
  }, 180_000)

  it("says what is wrong with a running service that is not ready", async () => {
    const emptyModels = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-nomodels-"))
    const port = String(await freePort())
    const server = await startServerProcess({ ...env, VERBATIM_MODELS_DIR: emptyModels, VERBATIM_PORT: port, VERBATIM_RUNNER_PORT: String(await freePort()) })
    try {
      const result = await runCli(["doctor"], { ...env, VERBATIM_MODELS_DIR: emptyModels, VERBATIM_PORT: port })
      expect(result.code).toBe(1)
      expect(result.stdout).toMatch(/FAIL\s+service\s+Verbatim is running at http:\/\/127\.0\.0\.1:\d+ but not ready: models/)
      expect(result.stdout).toMatch(/FAIL\s+service models\s+whisper-tiny\.en is missing/)
      expect(result.stdout).not.toContain("EADDRINUSE\n      → stop what listens there")
    } finally {
      await server.stop()
    }
  }, 180_000)
})

describe("what insights hold", () => {
  const fields = Object.keys(Insights.fields).filter((field) => field !== "providers")

  it("the CLI's --insights help and the MCP insights tool name the answer's fields, nothing it lacks", async () => {
    const help = await runCli(["transcribe", "--help"], env)
    for (const text of [help.stdout, InsightsTool.description ?? ""]) {
      expect(text).toContain(fields.join(", "))
      expect(text).not.toMatch(/key points|action items/)
    }
  })
})

describe("verbatim transcribe", () => {
  it("takes several files and a link, with a JSON summary holding the transcripts", async () => {
    const result = await runCli([
      "transcribe",
      path.join(mediaDir, "a01_slt_budget.wav"),
      `${links.origin}/episode.wav`,
      "--json"
    ], env)
    expect(result.code, result.stderr).toBe(0)
    const summary = JSON.parse(result.stdout) as { ok: boolean; results: Array<{ input: string; ok: boolean; transcript: string; duration_seconds: number }> }
    expect(summary.ok).toBe(true)
    expect(summary.results).toHaveLength(2)
    expect(summary.results[0]!.transcript.toLowerCase()).toContain("hiring plan")
    expect(summary.results[1]!.input).toBe(`${links.origin}/episode.wav`)
    expect(summary.results[1]!.transcript.toLowerCase()).toContain("weather")
    expect(result.stderr).toContain("100%")
  }, 180_000)

  it("adds insights with --insights, or says why there are none", async () => {
    const result = await runCli([
      "transcribe",
      path.join(mediaDir, "a08_interview_three_speakers.wav"),
      path.join(mediaDir, "n01_silence.wav"),
      "--insights",
      "--json"
    ], env)
    expect(result.code, result.stderr).toBe(0)
    const summary = JSON.parse(result.stdout) as { results: Array<{ insights: { summary?: unknown; chapters?: Array<unknown>; error?: string } }> }
    expect(summary.results[0]!.insights.summary).toBeDefined()
    expect(Array.isArray(summary.results[0]!.insights.chapters)).toBe(true)
    expect(summary.results[1]!.insights.error).toMatch(/too little speech for insights \(0 words, \d+ needed\)/)
  }, 240_000)

  it("labels speakers with --diarize", async () => {
    const result = await runCli(["transcribe", path.join(mediaDir, "a05_dialogue_slt_kal.wav"), "--diarize", "--format", "vtt"], env)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain("<v SPEAKER_00>")
    expect(result.stdout).toContain("<v SPEAKER_01>")
  }, 180_000)

  it("writes one file per input into --out, and exits 1 when one input fails", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-cli-out-"))
    const result = await runCli([
      "transcribe",
      path.join(mediaDir, "a03_espeak_library.wav"),
      path.join(mediaDir, "no-such-file.wav"),
      "--format",
      "srt",
      "--out",
      out
    ], env)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("no such file")
    expect(fs.readFileSync(path.join(out, "a03_espeak_library.srt"), "utf8")).toMatch(/^1\r?\n00:00:0/)
  }, 180_000)
})
