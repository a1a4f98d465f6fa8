/**
 * Where a test file's data lives. By default: embedded PGlite in a fresh temp dir.
 * With `VERBATIM_TEST_DATABASE_URL` (set by .ci/run's second pass when a Postgres answers
 * on 127.0.0.1:5432) each test file gets a database of its own on that server, dropped
 * afterwards, so the same suite runs against both.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { configLayerWith } from "./config.ts"

export const serverUrl = process.env["VERBATIM_TEST_DATABASE_URL"]
export const onPostgres = serverUrl !== undefined && serverUrl !== ""

export interface TestStorage {
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /** The same, as an environment for a spawned `verbatim` process. */
  readonly env: Record<string, string>
  readonly dispose: () => Promise<void>
}

/** One statement on the test server as its own user (`VERBATIM_TEST_DATABASE_URL`): databases, roles. */
export const adminQuery = (statement: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(statement)
  }).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(serverUrl!), maxConnections: 1 })),
    Effect.scoped,
    Effect.runPromise
  )

export const makeTestStorage = async (label: string): Promise<TestStorage> => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `verbatim-${label}-`))
  if (!onPostgres) {
    return {
      dataDir,
      databaseUrl: Option.none(),
      env: { VERBATIM_DATA_DIR: dataDir },
      dispose: async () => fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
  const name = `verbatim_test_${label.replace(/\W/g, "_")}_${process.pid}_${Date.now().toString(36)}`
  await adminQuery(`CREATE DATABASE ${name}`)
  const url = new URL(serverUrl!)
  url.pathname = `/${name}`
  return {
    dataDir,
    databaseUrl: Option.some(Redacted.make(url.href)),
    env: { VERBATIM_DATA_DIR: dataDir, DATABASE_URL: url.href },
    dispose: async () => {
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** The configuration areas on a test file's own storage (made when the layer is built, disposed with it). */
export const testStorageConfig = (label: string) =>
  Layer.unwrap(
    Effect.map(
      Effect.acquireRelease(
        Effect.promise(() => makeTestStorage(label)),
        (storage) => Effect.promise(() => storage.dispose())
      ),
      (storage) => configLayerWith({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl })
    )
  )
