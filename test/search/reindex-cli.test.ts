/**
 * `verbatim admin search reindex` as the operator runs it: the real entry point in a child
 * process over a data dir whose search index was wiped, its table left in the layout of a server
 * without pgvector (which the re-index switches to pgvector's). It indexes every finished account job
 * again (not deleted ones, not samples), draws its progress bar on stderr and prints a JSON
 * summary on stdout; the jobs are then found by a search over HTTP. The jobs come from the
 * stand-in pipeline in an in-process server that is stopped before the CLI runs (one process
 * at a time on an embedded database).
 */
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { accepted, eventually, postJson, request, submitFile, waitForJob } from "../support/jobsClient.ts"
import { modelsDir } from "../support/paths.ts"
import { runCli } from "../support/process.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { embeddingLayout } from "../../search/PgvectorLayout.ts"
import { withoutPgvector } from "./support.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-reindex-"))
const standIn = makeStandIn({ delayMs: 50, steps: 1 })
const start = () => startServer("reindex-cli", { dataDir, databaseUrl: Option.none() }, { pipeline: standIn.layer })

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

const passages = (server: TestServer) =>
  server.run(Effect.gen(function*() {
    const rows = yield* (yield* SqlClient.SqlClient)<{ job_id: string }>`SELECT job_id FROM search_passages`.pipe(Effect.orDie)
    return rows.map((row) => row.job_id)
  }))

const layout = (server: TestServer) => server.run(embeddingLayout.pipe(Effect.orDie))

const finds = async (server: TestServer, key: string, q: string, jobId: string) => {
  const response = await postJson(server, "/v1/library/search", { q }, key)
  const body = await response.json() as { hits: Array<{ job_id: string }> }
  return body.hits.some((hit) => hit.job_id === jobId)
}

describe("verbatim admin search reindex", () => {
  it("rebuilds a wiped index: finished account jobs only, progress on stderr, JSON summary on stdout", async () => {
    let server = await start()
    const { key } = await server.account()
    const submit = async (text: string, withKey = true) =>
      await accepted(await submitFile(server, { key: withKey ? key : undefined, file: { name: "talk.wav", bytes: tinyWav({ text }) } }))
    const kept = (await submit("The ferry to the island leaves every hour from pier four.")).job_id
    const other = (await submit("Our choir rehearses on Thursday evenings in the old chapel.")).job_id
    const deleted = (await submit("The museum closes for renovation next winter.")).job_id
    const sample = await submit("Sample recordings are never indexed for search.", false)
    for (const id of [kept, other, deleted]) await waitForJob(server, key, id)
    await waitForJob(server, undefined, sample.job_id, undefined, { headers: { "X-Claim-Token": sample.claim_token ?? "" } })
    expect((await request(server, "DELETE", `/v1/jobs/${deleted}`, key)).status).toBe(204)
    await eventually(async () => (await finds(server, key, "when does the ferry leave", kept) ? true : undefined), "the job indexed", 30_000, 200)
    await eventually(async () => ((await passages(server)).includes(deleted) ? undefined : true), "the deleted job unindexed", 30_000, 200)
    // The index wiped, and the table left as a server without pgvector makes it (bytea, no
    // HNSW): PGlite has the extension, as a server has once an operator installs it.
    await server.run(Layer.build(withoutPgvector).pipe(Effect.scoped))
    expect(await layout(server)).toEqual({ column: "bytea", indexdef: undefined })
    await server.close()

    const result = await runCli(["admin", "search", "reindex"], { VERBATIM_DATA_DIR: dataDir, VERBATIM_MODELS_DIR: modelsDir })
    expect(result.code, result.stderr).toBe(0)
    const summary = JSON.parse(result.stdout) as { reindexed_jobs: number; passages: number; seconds: number; vector_search: string }
    expect(summary.vector_search).toBe("hnsw_bit")
    expect(summary.reindexed_jobs).toBe(2)
    expect(summary.passages).toBe(2)
    expect(summary.seconds).toBeGreaterThanOrEqual(0)
    expect(result.stderr).toContain("[---------------") // the bar at 0/2
    expect(result.stderr).toMatch(/\[#{30}\] 2\/2 jobs\n/)

    server = await start()
    try {
      // pgvector's layout again, under the index the migrations build on PGlite (search/HnswIndex.ts).
      expect(await layout(server)).toEqual({ column: "vector", indexdef: expect.stringContaining("bit_hamming_ops") })
      expect(new Set(await passages(server))).toEqual(new Set([kept, other]))
      expect(await finds(server, key, "when does the ferry leave", kept)).toBe(true)
      expect(await finds(server, key, "when does the choir practise", other)).toBe(true)
    } finally {
      await server.close()
    }
  }, 180_000)
})
