/**
 * Several `verbatim serve` processes on one Postgres must share one media directory
 * (issue 25 item 5): a process whose VERBATIM_MEDIA_DIR does not hold the markers of the
 * live processes refuses to start, exit status 1, with a sentence saying what to mount; one
 * on the same directory starts, and a clean stop removes its registration and marker. Runs
 * only on Postgres (VERBATIM_TEST_DATABASE_URL): embedded storage has one process per data dir.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestStorage, onPostgres, type TestStorage } from "../support/database.ts"
import { type ServerProcess, startServerProcess } from "../support/process.ts"

let storage: TestStorage
let scratch: string
const processes: Array<ServerProcess> = []

beforeAll(async () => {
  if (!onPostgres) return
  storage = await makeTestStorage("shared-media")
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-shared-media-"))
}, 60_000)
afterAll(async () => {
  await Promise.all(processes.map((server) => server.stop("SIGKILL")))
  await storage?.dispose()
  if (scratch !== undefined) fs.rmSync(scratch, { recursive: true, force: true })
})

/** A process with a data dir of its own and the given media dir, on the shared database. */
const envFor = (name: string, mediaDir: string) => ({
  DATABASE_URL: storage.env["DATABASE_URL"]!,
  VERBATIM_DATA_DIR: path.join(scratch, `data-${name}`),
  VERBATIM_MEDIA_DIR: mediaDir,
  VERBATIM_SECRET_KEY: "shared-media-test-secret-key-0123456789"
})

const registered = () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ runner_id: string; media_dir: string }>`SELECT runner_id::text AS runner_id, media_dir FROM media_runners`
  }).pipe(
    Effect.provide(PgClient.layer({ url: Option.getOrThrow(storage.databaseUrl), maxConnections: 1 })),
    Effect.orDie,
    Effect.runPromise
  )

describe.skipIf(!onPostgres)("media directory shared by the processes on one Postgres", () => {
  it("a process on another media directory refuses to start; one on the same directory starts", async () => {
    const shared = path.join(scratch, "media-shared")
    const elsewhere = path.join(scratch, "media-elsewhere")
    const first = await startServerProcess(envFor("first", shared))
    processes.push(first)
    const [firstRow] = await registered()
    expect(firstRow?.media_dir).toBe(shared)
    expect(fs.existsSync(path.join(shared, ".runners", firstRow!.runner_id))).toBe(true)

    const refused = await startServerProcess(envFor("second", elsewhere)).then(
      (server) => {
        processes.push(server)
        return "started"
      },
      (error: Error) => error.message
    )
    expect(refused).toMatch(/server exited \(1\) before listening/)
    expect(refused).toContain(`verbatim: the media directory ${elsewhere} does not hold the files of 1 other running Verbatim process`)
    expect(refused).toContain(`their media: ${shared} on ${os.hostname()}`)
    expect(refused).toContain("mount one shared directory (NFS or a shared volume) on every machine and point VERBATIM_MEDIA_DIR at it")
    // The refused process took its registration and marker with it.
    expect((await registered()).map((row) => row.runner_id)).toEqual([firstRow!.runner_id])
    expect(fs.readdirSync(path.join(elsewhere, ".runners"))).toEqual([])

    const third = await startServerProcess(envFor("third", shared))
    processes.push(third)
    const rows = await registered()
    expect(rows).toHaveLength(2)
    for (const row of rows) expect(fs.existsSync(path.join(shared, ".runners", row.runner_id))).toBe(true)

    // A clean stop deregisters and removes the marker.
    await third.stop("SIGTERM")
    expect((await registered()).map((row) => row.runner_id)).toEqual([firstRow!.runner_id])
    expect(fs.readdirSync(path.join(shared, ".runners"))).toEqual([firstRow!.runner_id])
  }, 180_000)

  it("a media directory this process cannot write stops the start with a sentence saying so", async () => {
    // A path through a regular file: no user, root included, can create it.
    const blocker = path.join(scratch, "a-file")
    fs.writeFileSync(blocker, "not a directory")
    const media = path.join(blocker, "media")
    const refused = await startServerProcess(envFor("unwritable", media)).then(
      (server) => {
        processes.push(server)
        return "started"
      },
      (error: Error) => error.message
    )
    expect(refused).toMatch(/server exited \(1\) before listening/)
    expect(refused).toContain(`verbatim: the media directory ${media} cannot be written (ENOTDIR)`)
  }, 120_000)
})
