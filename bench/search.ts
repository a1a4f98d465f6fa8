/**
 * Library search benchmark on the embedded backend (PGlite + pgvector over its socket,
 * as the service runs it).
 *
 *   node --experimental-strip-types bench/search.ts             1k and 10k passages
 *   node --experimental-strip-types bench/search.ts --sizes 1000,10000,100000
 *   node --experimental-strip-types bench/search.ts --exact       the no-pgvector layout (bytea, exact scan)
 *   node --experimental-strip-types bench/search.ts --bulk 100000  a library loaded in bulk (see below)
 *
 * Figures:
 * - embedding cost per audio hour: a 10-minute synthetic transcript (sentences of the
 *   shared/media references and the test decoys at 2.6 words/s) cut into passages and
 *   embedded one text per run, scaled to an hour;
 * - index throughput (passages/s): storing pre-embedded passages (jobs of 100 passages,
 *   one account), i.e. the backend's share of indexing, HNSW and GIN upkeep included;
 * - query latency p50/p99 of `SearchIndex.search` end to end (query embedding, both
 *   candidate lists, moment narrowing) over the whole library of one account.
 * Stored vectors are real embeddings of the pool's passages plus noise, renormalised, so
 * the library can grow without embedding 100k texts first.
 *
 * `--bulk N` builds the library the way a re-index of a large install ends up, but fast enough
 * to measure on 2 cores: the HNSW and GIN indexes are dropped, N rows (real passage texts of
 * the pool, SYNTHETIC vectors: the pool's real embeddings plus noise, renormalised) are inserted
 * in chunks of 500, then both indexes are built once and the table analysed. Bulk load and
 * index build times are printed apart; they are not the incremental indexing throughput above.
 * Query latency is then measured as above, end to end through `SearchIndex.search`.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { DatabaseLayer } from "../layers/Database.ts"
import { OnnxRuntime } from "../pipeline/onnx/OnnxRuntime.ts"
import { AppConfig } from "../services/AppConfig.ts"
import { Embedder } from "../search/Embedder.ts"
import { cutPassages } from "../search/Passages.ts"
import { PostgresSearchBackend } from "../search/PostgresSearchBackend.ts"
import { type PassageDocument, SearchBackend } from "../search/SearchBackend.ts"
import { SearchIndex } from "../search/SearchIndex.ts"
import { qualityLibrary } from "../test/search/library.ts"
import { sentences, transcriptOf, withoutPgvector } from "../test/search/support.ts"

const modelsDir = path.resolve(import.meta.dirname, "../../shared/models")
const arg = (name: string) => {
  const i = process.argv.indexOf(name)
  return i < 0 ? undefined : process.argv[i + 1]
}
const bulk = arg("--bulk") === undefined ? undefined : Number(arg("--bulk"))
const sizes = (arg("--sizes") ?? (bulk === undefined ? "1000,10000" : "")).split(",").filter((x) => x !== "").map(Number)
const QUERIES = 100
const questions = [
  "when is the library open",
  "who is building wind turbines",
  "what did they decide about hiring",
  "how fast is the shoreline retreating each year",
  "what is the price of building barriers against the ocean",
  "who plants vegetation on the sandy hills every weekend",
  "should I expect a downpour this evening",
  "what has to change in the agreement before signing",
  "what keeps community journalism going",
  "¿Qué día abre el mercado?"
]

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const noisy = (v: Float32Array, sigma: number): Float32Array => {
  const out = new Float32Array(v.length)
  let norm = 0
  for (let i = 0; i < v.length; i++) {
    // Box–Muller.
    const g = Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random())
    out[i] = v[i]! + sigma * g
    norm += out[i]! * out[i]!
  }
  const scale = 1 / Math.sqrt(norm)
  for (let i = 0; i < v.length; i++) out[i]! *= scale
  return out
}

const program = Effect.gen(function*() {
  const embedder = yield* Embedder
  const backend = yield* SearchBackend
  const index = yield* SearchIndex

  // — embedding cost per audio hour —
  const allSentences = qualityLibrary.flatMap((item) => sentences(item.transcript.text))
  const lines: Array<{ text: string }> = []
  let words = 0
  while (words < 2.6 * 600) {
    const text = allSentences[lines.length % allSentences.length]!
    lines.push({ text })
    words += text.split(/\s+/u).length
  }
  const tenMinutes = transcriptOf(lines)
  const passages = cutPassages(tenMinutes)
  yield* embedder.embed(["warm-up"])
  const t0 = performance.now()
  const vectors = yield* embedder.embed(passages.map((p) => p.text))
  const embedMs = performance.now() - t0
  const audioSeconds = tenMinutes.segments.at(-1)!.end
  console.log(
    `embedding: ${passages.length} passages for ${(audioSeconds / 60).toFixed(1)} min of speech in ${(embedMs / 1000).toFixed(2)} s ` +
      `→ ${((embedMs / 1000) * 3600 / audioSeconds).toFixed(1)} s of CPU (1 thread) per audio hour, ` +
      `${(embedMs / passages.length).toFixed(1)} ms per passage`
  )

  // — index throughput and query latency —
  const pool: Array<PassageDocument> = passages.map((p, i) => ({ ...p, embedding: vectors[i]! }))
  const accountId = randomUUID()
  let stored = 0
  const p = (values: ReadonlyArray<number>) => `p50 ${percentile(values, 50).toFixed(1)} ms, p99 ${percentile(values, 99).toFixed(1)} ms`
  /** 100 questions through `SearchIndex.search`, with the query embedding and the first candidate list timed apart. */
  const measureQueries = Effect.fnUntraced(function*() {
    const latencies: Array<number> = []
    const embedding: Array<number> = []
    const firstList: Array<number> = []
    for (let i = 0; i < QUERIES; i++) {
      const q = questions[i % questions.length]!
      const q0 = performance.now()
      yield* index.search({ accountId, q, limit: 10 })
      const q1 = performance.now()
      const [vector] = yield* embedder.embed([q])
      const q2 = performance.now()
      yield* backend.candidates({ accountId, q, vector: vector!, limit: 40 })
      const q3 = performance.now()
      latencies.push(q1 - q0)
      embedding.push(q2 - q1)
      firstList.push(q3 - q2)
    }
    return `search ${p(latencies)} (${QUERIES} queries); of which: query embedding ${p(embedding)}, ` +
      `first candidate list (vector + full text + fusion) ${p(firstList)}`
  })
  for (const size of sizes) {
    const started = performance.now()
    while (stored < size) {
      const jobId = randomUUID()
      const docs = Array.from({ length: 100 }, (_, i) => {
        const base = pool[(stored + i) % pool.length]!
        return { ...base, embedding: noisy(base.embedding, 0.03) }
      })
      yield* backend.replaceJob(accountId, jobId, { filename: `${jobId}.wav`, language: "en", created_at: new Date() }, docs)
      stored += docs.length
    }
    const seconds = (performance.now() - started) / 1000
    const added = size - (sizes[sizes.indexOf(size) - 1] ?? 0)
    console.log(
      `${size} passages: indexed ${added} in ${seconds.toFixed(1)} s (${(added / seconds).toFixed(0)} passages/s); ` +
        (yield* measureQueries())
    )
  }

  if (bulk !== undefined && !exact) {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DROP INDEX search_passages_embedding`.pipe(Effect.orDie)
    yield* sql`DROP INDEX search_passages_tsv`.pipe(Effect.orDie)
    const loadStarted = performance.now()
    const created = new Date()
    while (stored < bulk) {
      const jobId = randomUUID()
      const rows = Array.from({ length: Math.min(500, bulk - stored) }, (_, i) => {
        const base = pool[(stored + i) % pool.length]!
        return {
          account_id: accountId,
          job_id: jobId,
          kind: base.kind,
          start: base.start,
          end: base.end,
          speaker: base.speaker,
          text: base.text,
          moments: JSON.stringify(base.moments),
          filename: `${jobId}.wav`,
          language: "en",
          ts_config: "english",
          created_at: created,
          embedding: `[${Array.from(noisy(base.embedding, 0.03)).join(",")}]`
        }
      })
      yield* sql`INSERT INTO search_passages ${sql.insert(rows as [typeof rows[0] & {}])}`.pipe(Effect.orDie)
      stored += rows.length
      if (stored % 10_000 === 0) process.stderr.write(`bulk load: ${stored}/${bulk}\n`)
    }
    const loadSeconds = (performance.now() - loadStarted) / 1000
    const ginStarted = performance.now()
    yield* sql`CREATE INDEX search_passages_tsv ON search_passages USING gin (tsv)`.pipe(Effect.orDie)
    const ginSeconds = (performance.now() - ginStarted) / 1000
    process.stderr.write(`GIN built in ${ginSeconds.toFixed(1)} s\n`)
    // The default 64 MB cannot hold the graph of 100k 384-d vectors; pgvector then builds far slower.
    yield* sql`SET maintenance_work_mem = '512MB'`.pipe(Effect.orDie)
    const hnswStarted = performance.now()
    yield* sql`CREATE INDEX search_passages_embedding ON search_passages USING hnsw (embedding vector_cosine_ops)`.pipe(Effect.orDie)
    const hnswSeconds = (performance.now() - hnswStarted) / 1000
    yield* sql`ANALYZE search_passages`.pipe(Effect.orDie)
    console.log(
      `${stored} passages (bulk; SYNTHETIC vectors = real passage embeddings + noise, real texts): loaded in ` +
        `${loadSeconds.toFixed(1)} s, GIN built in ${ginSeconds.toFixed(1)} s, HNSW built in ${hnswSeconds.toFixed(1)} s; ` +
        (yield* measureQueries())
    )
    // The vector list alone (the HNSW share of the first candidate list), as the backend asks it.
    const vectorOnly: Array<number> = []
    for (let i = 0; i < QUERIES; i++) {
      const [vector] = yield* embedder.embed([questions[i % questions.length]!])
      const t = performance.now()
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SET LOCAL hnsw.iterative_scan = relaxed_order`
        yield* sql`SELECT id FROM search_passages WHERE account_id = ${accountId}
          ORDER BY embedding <=> ${`[${Array.from(vector!).join(",")}]`}::vector LIMIT 50`
      })).pipe(Effect.orDie)
      vectorOnly.push(performance.now() - t)
    }
    console.log(`${stored} passages: HNSW nearest 50 alone ${p(vectorOnly)}`)
  }
})

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-bench-search-"))
const database = DatabaseLayer.pipe(Layer.provide(AppConfig.layerWith({ dataDir, databaseUrl: Option.none() })))
const embedder = Embedder.layer({ modelsDir, threads: 1 }).pipe(
  Layer.provide(OnnxRuntime.layer({ threads: 1, idleUnloadMs: 60_000 }))
)
const exact = process.argv.includes("--exact")
const layer = SearchIndex.layer.pipe(
  Layer.provideMerge(PostgresSearchBackend.layer()),
  Layer.provideMerge(embedder),
  Layer.provideMerge(exact ? withoutPgvector.pipe(Layer.provideMerge(database)) : database)
)

await Effect.runPromise(program.pipe(Effect.provide(layer), Effect.scoped))
fs.rmSync(dataDir, { recursive: true, force: true })
