/**
 * A Postgres server with pgvector available whose `verbatim` role may not create extensions (not
 * a superuser: pgvector is not a trusted extension). The migrations fall back to the exact-scan
 * layout (`bytea` embeddings, no HNSW), and `verbatim admin search reindex`, whose first step
 * would switch that table to pgvector's layout (search/PgvectorLayout.ts `adoptPgvector`),
 * leaves it as it is, re-indexes, and says which search it ended on instead of failing.
 * Postgres pass only: PGlite always has the extension.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { embeddingLayout } from "../../search/PgvectorLayout.ts"
import { adminQuery, onPostgres, serverUrl } from "../support/database.ts"
import { modelsDir } from "../support/paths.ts"
import { runCli } from "../support/process.ts"

const suffix = `${process.pid}_${Date.now().toString(36)}`
const role = `verbatim_noext_${suffix}`
const database = `verbatim_test_noext_${suffix}`
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-pgvector-refused-"))

const run = <A>(url: string, effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  effect.pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
    Effect.scoped,
    Effect.orDie,
    Effect.runPromise
  )

const roleUrl = () => {
  const url = new URL(serverUrl!)
  url.username = role
  url.password = ""
  url.pathname = `/${database}`
  return url.href
}

afterAll(async () => {
  fs.rmSync(dataDir, { recursive: true, force: true })
  if (!onPostgres) return
  await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  await adminQuery(`DROP ROLE IF EXISTS ${role}`)
})

describe.skipIf(!onPostgres)("pgvector refused (a role that may not create the extension)", () => {
  it("keeps the exact-scan layout through the migrations and the re-index, and reports it", async () => {
    await adminQuery(`CREATE ROLE ${role} LOGIN NOSUPERUSER`)
    await adminQuery(`CREATE DATABASE ${database} OWNER ${role}`)
    const [available] = await run(serverUrl!, Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ name: string }>`SELECT name FROM pg_available_extensions WHERE name = 'vector'`))
    // The refusal is the privilege's, not a missing package (.ci/pgvector.sh installs it).
    expect(available?.name).toBe("vector")

    const result = await runCli(["admin", "search", "reindex"], {
      VERBATIM_DATA_DIR: dataDir,
      VERBATIM_MODELS_DIR: modelsDir,
      DATABASE_URL: roleUrl()
    })
    expect(result.code, result.stderr).toBe(0)
    const summary = JSON.parse(result.stdout) as { reindexed_jobs: number; vector_search: string }
    expect(summary).toMatchObject({ reindexed_jobs: 0, vector_search: "exact" })

    const after = await run(roleUrl(), Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const installed = yield* sql`SELECT 1 FROM pg_extension WHERE extname = 'vector'`
      return { installed: installed.length > 0, layout: yield* embeddingLayout }
    }))
    expect(after).toEqual({ installed: false, layout: { column: "bytea", indexdef: undefined } })
  }, 120_000)
})
