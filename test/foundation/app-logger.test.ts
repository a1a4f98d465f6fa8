/**
 * The server's log lines (services/observability/AppLogger.ts `buffered`): gathered into one
 * write per `bufferBytes` instead of one system call per request, yet never held back longer
 * than `flushEveryMs`, and written out when the logger's scope closes.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import { AppLogger } from "../../services/observability/AppLogger.ts"

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
