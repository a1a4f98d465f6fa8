/**
 * The server's log lines (services/observability/AppLogger.ts `buffered`): gathered into one
 * write per `bufferBytes` instead of one system call per request, yet never held back longer
 * than `flushEveryMs`, and written out when the logger's scope closes. Every line, request,
 * Effect log, the start-up line and the shutdown signal's, has one format (numeric level,
 * `service` once), and the start-up line names the model, decoder and database.
 */
import { assert, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, it as plainIt } from "vitest"
import { DatabaseConfig } from "../../services/config/DatabaseConfig.ts"
import { SpeechConfig } from "../../services/config/SpeechConfig.ts"
import { StorageConfig } from "../../services/config/StorageConfig.ts"
import { configLayerWith } from "../support/config.ts"
import { AppLogger, startupFields } from "../../services/observability/AppLogger.ts"
import { modelsDir } from "../support/paths.ts"
import { startServerProcess } from "../support/process.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-logger-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let files = 0

const open = (options: { readonly bufferBytes: number; readonly flushEveryMs: number }) =>
  Effect.gen(function*() {
    const file = path.join(dir, `log-${++files}.jsonl`)
    const fd = fs.openSync(file, "w")
    const scope = yield* Scope.make()
    const logger = yield* AppLogger.buffered("info", { dest: fd, ...options }).pipe(Scope.provide(scope))
    const lines = () =>
      fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Record<string, unknown>)
    return { logger, lines, close: Scope.close(scope, Exit.void) }
  })

const entry = (i: number) => ({ request_id: `r${i}`, method: "GET", path: "/v1/me", status: 200, ms: 1.5, account_id: null })

/** Polls until `check` holds or `withinMs` pass. */
const eventually = (check: () => boolean, withinMs: number) =>
  Effect.gen(function*() {
    const until = Date.now() + withinMs
    while (!check() && Date.now() < until) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    return check()
  })

it.effect("holds a few lines back, then writes them within the flush interval, whole and in order", () =>
  Effect.gen(function*() {
    const { logger, lines, close } = yield* open({ bufferBytes: 8 * 1024, flushEveryMs: 100 })
    for (let i = 0; i < 3; i++) logger.request(entry(i))
    assert.deepStrictEqual(lines(), [])
    assert.isTrue(yield* eventually(() => lines().length === 3, 5_000))
    assert.deepStrictEqual(lines().map((line) => [line["msg"], line["request_id"]]), [["request", "r0"], ["request", "r1"], ["request", "r2"]])
    yield* close
  }))

it.effect("writes as soon as the buffer fills, without waiting for the interval", () =>
  Effect.gen(function*() {
    const { logger, lines, close } = yield* open({ bufferBytes: 1024, flushEveryMs: 600_000 })
    for (let i = 0; i < 20; i++) logger.request(entry(i))
    assert.isTrue(yield* eventually(() => lines().length >= 5, 5_000))
    yield* close
    assert.strictEqual(lines().length, 20)
  }))

it.effect("writes what it holds when its scope closes", () =>
  Effect.gen(function*() {
    const { logger, lines, close } = yield* open({ bufferBytes: 8 * 1024, flushEveryMs: 600_000 })
    logger.request(entry(1))
    logger.pino.error({ msg: "last words" })
    assert.deepStrictEqual(lines(), [])
    yield* close
    assert.deepStrictEqual(lines().map((line) => line["msg"]), ["request", "last words"])
  }))

/** The keys of one raw JSON line, in order, repeats included (JSON.parse would hide a repeat). */
const rawKeys = (line: string) => [...line.matchAll(/"([a-z_]+)":/g)].map((m) => m[1]!)

it.effect("one format: numeric level, service once, also for Effect logs annotated with a line key", () =>
  Effect.gen(function*() {
    const file = path.join(dir, "effect.jsonl")
    const fd = fs.openSync(file, "w")
    const scope = yield* Scope.make()
    const logger = yield* AppLogger.buffered("info", { dest: fd, flushEveryMs: 10 }).pipe(Scope.provide(scope))
    yield* Effect.logInfo("task ended").pipe(
      Effect.annotateLogs({ service: "transcribe", job_id: "j1" }),
      Effect.provide(AppLogger.effectLogger.pipe(Layer.provide(Layer.succeed(AppLogger, logger))))
    )
    logger.request(entry(1))
    yield* Scope.close(scope, Exit.void)
    const direct = path.join(dir, "direct.jsonl")
    AppLogger.direct("info", direct).info({ msg: "shutting down", signal: "SIGTERM" })
    const lines = [...fs.readFileSync(file, "utf8").split("\n"), ...fs.readFileSync(direct, "utf8").split("\n")].filter((l) => l !== "")
    assert.strictEqual(lines.length, 3)
    for (const line of lines) {
      const keys = rawKeys(line)
      assert.deepStrictEqual(keys.slice(0, 4), ["level", "time", "service", "msg"], line)
      assert.strictEqual(keys.filter((k) => k === "service").length, 1, line)
      assert.strictEqual((JSON.parse(line) as { level: unknown }).level, 30, line)
    }
    const task = JSON.parse(lines[0]!) as Record<string, unknown>
    assert.strictEqual(task["service"], "verbatim")
    assert.strictEqual(task["annotation_service"], "transcribe")
    assert.strictEqual(task["job_id"], "j1")
  }))

plainIt("the start-up fields name the model, the resolved decoder and the database without its password", () => {
  const config = Effect.runSync(Effect.scoped(Effect.map(
    Layer.build(configLayerWith({ databaseUrl: Option.some(Redacted.make("postgres://app:s3cret@db.internal:5433/verbatim?sslmode=require")) })),
    (context) => ({ ...Context.get(context, SpeechConfig), ...Context.get(context, DatabaseConfig), ...Context.get(context, StorageConfig) })
  )))
  const fields = startupFields(config)
  assert.strictEqual(fields.model, "whisper-base")
  assert.include(["native", "wasm"], fields.decoder)
  assert.strictEqual(fields.database, "postgres app@db.internal:5433/verbatim")
  assert.notInclude(JSON.stringify(fields), "s3cret")
  assert.strictEqual(startupFields({ ...config, databaseUrl: Option.none(), dataDir: "/srv/v" }).database, "embedded PGlite in /srv/v/pg")
  assert.strictEqual(startupFields({ ...config, decoder: "wasm" }).decoder, "wasm")
})

plainIt("a real server's lines, from start-up to the shutdown signal, share that format", async () => {
  const data = fs.mkdtempSync(path.join(dir, "server-"))
  const server = await startServerProcess({ VERBATIM_DATA_DIR: data, VERBATIM_MODELS_DIR: modelsDir, VERBATIM_MODEL: "whisper-tiny.en", VERBATIM_DECODER: "wasm" })
  await fetch(`${server.url}/v1/me`)
  await new Promise((resolve) => setTimeout(resolve, 500))
  await server.stop("SIGTERM")
  const lines = server.output().split("\n").filter((line) => line.startsWith("{"))
  const listening = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line["msg"] === "listening")
  assert.deepInclude(listening, { model: "whisper-tiny.en", decoder: "wasm", database: `embedded PGlite in ${data}/pg` })
  assert.isTrue(lines.some((line) => line.includes('"msg":"shutting down"')))
  for (const line of lines) {
    assert.deepStrictEqual(rawKeys(line).slice(0, 4), ["level", "time", "service", "msg"], line)
    assert.isNumber((JSON.parse(line) as { level: unknown }).level, line)
  }
}, 60_000)
