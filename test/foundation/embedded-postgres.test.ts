/**
 * The embedded database (services/db/EmbeddedPostgres.ts): PGlite and its socket server in a
 * process of their own. A long query leaves the main event loop free; data survives a close
 * and reopen; the socket goes with the layer; a second opener becomes a client; the database
 * process of a killed owner closes and the next opener owns the directory; a data directory
 * PGlite cannot open is an EmbeddedPostgresError, not a hang or a crash.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { spawn } from "node:child_process"
import { afterAll } from "vitest"
import { EmbeddedPostgres, socketPathFor } from "../../services/db/EmbeddedPostgres.ts"
import { repoRoot } from "../support/process.ts"
import { bind, execute, parse, rawClient, sync } from "../support/rawPostgres.ts"

const dirs: Array<string> = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-embedded-"))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

const clientOf = (dataDir: string) =>
  Layer.unwrap(
    Effect.map(EmbeddedPostgres, ({ socketPath }) =>
      PgClient.layer({ path: socketPath, database: "postgres", username: "postgres", maxConnections: 1 }))
  ).pipe(Layer.provideMerge(EmbeddedPostgres.layer({ dataDir })))

it.effect("runs a long query without holding up the main event loop", () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    assert.isTrue((yield* EmbeddedPostgres).owner)
    let ticks = 0
    const timer = setInterval(() => void ticks++, 5)
    const started = performance.now()
    const [row] = yield* sql<{ total: string }>`SELECT sum(i)::text AS total FROM generate_series(1, 3000000) AS i`
    const elapsedMs = performance.now() - started
    clearInterval(timer)
    assert.strictEqual(row!.total, "4500001500000")
    // With PGlite on this thread the timer could not fire until the answer came (0–1 ticks).
    assert.isAbove(elapsedMs, 100, "the query should take long enough to tell")
    assert.isAtLeast(ticks, Math.floor(elapsedMs / 5 / 4))
  }).pipe(Effect.provide(clientOf(tempDir()))), { timeout: 60_000 })

it.effect("keeps its data across a close and reopen, removes its socket, and lets a second opener visit", () =>
  Effect.gen(function*() {
    const dataDir = tempDir()
    const socketPath = socketPathFor(dataDir)
    yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE kept (v text)`
      yield* sql`INSERT INTO kept VALUES ('survives')`
      assert.isTrue(fs.existsSync(socketPath))
      // A second opener of a live directory connects to the owner's socket.
      const visitor = yield* Effect.gen(function*() {
        const visiting = yield* SqlClient.SqlClient
        const rows = yield* visiting<{ v: string }>`SELECT v FROM kept`
        return { owner: (yield* EmbeddedPostgres).owner, rows }
      }).pipe(Effect.provide(clientOf(dataDir)))
      assert.deepStrictEqual(visitor, { owner: false, rows: [{ v: "survives" }] })
    }).pipe(Effect.provide(clientOf(dataDir)))
    assert.isFalse(fs.existsSync(socketPath))
    const rows = yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      assert.isTrue((yield* EmbeddedPostgres).owner)
      return yield* sql<{ v: string }>`SELECT v FROM kept`
    }).pipe(Effect.provide(clientOf(dataDir)))
    assert.deepStrictEqual(rows, [{ v: "survives" }])
  }), { timeout: 120_000 })

// pglite-socket queues each protocol message on its own and kept one client's messages together
// only inside a transaction: another client's query between one client's Bind and Execute
// replaced and closed the unnamed portal ("portal \"\" does not exist", seen once in CI with the
// admin CLI granting minutes while the server polled its jobs). Raw protocol, so the first
// client's query can be cut between its Bind and its Execute, where a real client's reads may be.
it.live("keeps one client's extended-protocol query whole while another client queries", () =>
  Effect.gen(function*() {
    const { socketPath } = yield* EmbeddedPostgres
    const first = yield* Effect.promise(() => rawClient(socketPath))
    const second = yield* Effect.promise(() => rawClient(socketPath))
    // Parse and Bind of `SELECT 'first'`, then nothing until the other client is done.
    first.send(Buffer.concat([parse("SELECT 'first' AS v"), bind()]))
    yield* Effect.sleep("100 millis")
    const secondAnswer = second.untilReady()
    second.send(Buffer.concat([parse("SELECT 'second' AS v"), bind(), execute(), sync()]))
    // The second client's query waits for the first's to end (before, it ran at once and closed
    // the first client's portal).
    yield* Effect.sleep("100 millis")
    const firstAnswer = first.untilReady()
    first.send(Buffer.concat([execute(), sync()]))
    const answers = yield* Effect.promise(() => Promise.all([firstAnswer, secondAnswer]))
    first.close()
    second.close()
    assert.deepStrictEqual(answers, [["first"], ["second"]])
  }).pipe(Effect.provide(EmbeddedPostgres.layer({ dataDir: tempDir() }))), { timeout: 60_000 })

it.live("a killed owner's database process closes; the next opener owns the directory, data intact", () =>
  Effect.gen(function*() {
    const dataDir = tempDir()
    const owner = spawn(process.execPath, [path.join(repoRoot, "test/support/embeddedOwner.ts"), dataDir], { cwd: repoRoot })
    let output = ""
    yield* Effect.callback<void, Error>((resume) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes("@@ready")) resume(Effect.void)
      }
      owner.stdout.on("data", onData)
      owner.stderr.on("data", onData)
      owner.once("exit", (code) => resume(Effect.fail(new Error(`the owner exited (${code}) before it was ready:\n${output}`))))
    })
    const socketPath = socketPathFor(dataDir)
    assert.isTrue(fs.existsSync(socketPath))
    const databasePid = Number(fs.readFileSync(path.join(path.dirname(socketPath), "database.pid"), "utf8"))
    assert.notStrictEqual(databasePid, owner.pid)
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0)
      } catch {
        return false
      }
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
      return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z" // not a zombie
    }
    yield* Effect.callback<void>((resume) => {
      owner.once("exit", () => resume(Effect.void))
      owner.kill("SIGKILL")
    })
    // At once, while the orphaned database process is still closing: not a visit to it, and
    // the files are opened only after it has closed them (and dropped its pid file).
    assert.isTrue(alive(databasePid))
    const rows = yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      assert.isTrue((yield* EmbeddedPostgres).owner)
      assert.notStrictEqual(Number(fs.readFileSync(path.join(path.dirname(socketPath), "database.pid"), "utf8")), databasePid)
      return yield* sql<{ v: string }>`SELECT v FROM kept`
    }).pipe(Effect.provide(clientOf(dataDir)))
    assert.deepStrictEqual(rows, [{ v: "written before the kill" }])
    // Nothing is left running.
    for (let i = 0; i < 100 && alive(databasePid); i++) yield* Effect.sleep("100 millis")
    assert.isFalse(alive(databasePid))
  }), { timeout: 120_000 })

it.effect("fails with EmbeddedPostgresError when PGlite cannot open the directory", () =>
  Effect.gen(function*() {
    const dataDir = tempDir()
    fs.writeFileSync(path.join(dataDir, "PG_VERSION"), "not a version\n")
    const error = yield* Effect.flip(Effect.scoped(Layer.build(EmbeddedPostgres.layer({ dataDir }))))
    assert.strictEqual(error._tag, "EmbeddedPostgresError")
    assert.strictEqual(error.dataDir, path.resolve(dataDir))
    assert.include(error.message, dataDir)
    assert.isFalse(fs.existsSync(socketPathFor(dataDir)))
  }), { timeout: 60_000 })

it.effect("fails with EmbeddedPostgresError when the directory cannot be made", () =>
  Effect.gen(function*() {
    const file = path.join(tempDir(), "a-file")
    fs.writeFileSync(file, "")
    const error = yield* Effect.flip(Effect.scoped(Layer.build(EmbeddedPostgres.layer({ dataDir: path.join(file, "pg") }))))
    assert.strictEqual(error._tag, "EmbeddedPostgresError")
  }))
