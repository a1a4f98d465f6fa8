/**
 * Library search benchmark on the embedded backend (PGlite + pgvector over its socket,
 * as the service runs it).
 *
 *   node --experimental-strip-types bench/search.ts             1k and 10k passages
 *   node --experimental-strip-types bench/search.ts --sizes 1000,10000,100000
 *   node --experimental-strip-types bench/search.ts --exact       the no-pgvector layout (bytea, exact scan)
 *   node --experimental-strip-types bench/search.ts --bulk 100000  a library loaded in bulk (see below)
 *   npx node bench/search.ts --bulk 100000 --data DIR   keep the bulk library in DIR; a later run measures it again
 *   … --varied            bulk passages get two random extra sentences (nearly distinct texts)
 *   … --corpus FILE       bulk passages cut from FILE's distinct sentences (bench/search-corpus.py),
 *                         each embedded for real: distinct texts, distinct real vectors (below)
 *   … --database-url URL  a Postgres server instead of PGlite (without pgvector: the exact scan)
 *   … --embed-only        with --corpus: embed (and keep, with --data) the passages only, no library
 *   … --embed-threads N   intra-op threads of the embedder (default 1; also the queries' embedding)
 *   … --embed-workers N   with --corpus and --data: embed the missing passages in N processes (one a core)
 *   … --queries N         N timed queries (default 100); --no-recall skips recall@10
 *   … --ef-search N, --lexical-ranked N   the backend's hnsw.ef_search (400; 800 over sign bits; 800 / 1000 from 500k passages) and full-text sample (300)
 *   … --apertium DIR|none Apertium's data folder for translated questions (default /usr/share/apertium, as the service)
 *   … --index half|bit|full  bulk-build the HNSW index over half precision, sign bits or stored vectors
 *                         (default: as migrations 0024/0025 choose, half on a server, bit on PGlite); a
 *                         choice other than the default is built, then measured by a second run with
 *                         the same --data
 *   … --explain           with --data: EXPLAIN ANALYZE of the full-text and vector queries
 *   … --spans [Q]         with --data: one search's spans (use case, backend, SQL statements) timed, as a tree
 *   … --no-prewarm-wait   measure at once instead of after the embedded database's cache prewarm
 *
 * recall@10: the hits of `SearchIndex.search` against those of the same service over
 * `PostgresSearchBackend.layer({ exact: true })` (exact vector order, every full-text match
 * ranked), hit by hit (same job and times), over every distinct question.
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
 *
 * `--corpus FILE` (with `--bulk N`) replaces the pool's repeated texts and noisy vectors: jobs of
 * 60 consecutive sentences of FILE (one a line) become transcripts at 2.6 words/s, are cut into
 * passages as the service cuts them, and every passage is embedded by MiniLM, one text per run;
 * the quality library's own passages are stored once among them, so the questions have answers.
 * Vectors are kept in `DIR/corpus.f32` with `--data DIR`, so a rebuild (or a larger size) does not
 * embed the same passages again.
 * This is the library recall@10 means something on: no two passages share a text or a vector.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer, Option, Redacted, Tracer } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { DatabaseLayer } from "../layers/Database.ts"
import { BufferPrewarm } from "../services/db/BufferPrewarm.ts"
import { INDEX_KINDS, type IndexKind, indexKindOf, nearestRows } from "../search/HnswIndex.ts"
import { buildHnswIndex, embeddingLayout, indexKindHere } from "../search/PgvectorLayout.ts"
import { socketPathFor } from "../services/db/EmbeddedPostgres.ts"
import { OnnxRuntime } from "../pipeline/onnx/OnnxRuntime.ts"
import { DatabaseConfig } from "../services/config/DatabaseConfig.ts"
import { StorageConfig } from "../services/config/StorageConfig.ts"
import { Embedder } from "../search/Embedder.ts"
import { cutPassages } from "../search/Passages.ts"
import { PostgresSearchBackend, setEfSearch } from "../search/PostgresSearchBackend.ts"
import { type PassageDocument, SearchBackend } from "../search/SearchBackend.ts"
import { defaultMinRelevance as DEFAULT_MIN_RELEVANCE } from "../src/contract/api/SearchApi.ts"
import { QueryTranslator } from "../search/QueryTranslator.ts"
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
const QUERIES = Number(arg("--queries") ?? 100)
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
  "¿Qué día abre el mercado?",
  "who is the scientist on the show",
  "how much land can a single bad night take away",
  "¿Dónde puedo comprar verduras frescas de la zona?",
  // Cross-lingual (session 14): searched again in English through Apertium when installed.
  "¿Cuántos metros de acantilado pierde la costa cada año?",
  "stock market crash in Tokyo",
  "how do I reset my router password",
  "what is the recipe for chocolate cake",
  "when will the new windmills feed the grid",
  "what are we planting in the raised beds this week",
  "weather",
  "library"
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

/** Resident memory of the embedded database's process (PGlite), from its pid file; "" on a server. */
const databaseRss = (): string => {
  if (databaseUrl !== undefined) return ""
  try {
    const pid = fs.readFileSync(path.join(path.dirname(socketPathFor(path.join(dataDir, "pg"))), "database.pid"), "utf8").trim()
    const kb = /VmRSS:\s+(\d+)/u.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
    return kb === undefined ? "" : `database process RSS ${(Number(kb) / 1024).toFixed(0)} MB`
  } catch {
    return ""
  }
}

/**
 * Whether the library's `embedding` column is pgvector's (else the exact-scan layout), and the
 * vector list's ORDER BY as the backend writes it for the index the table has. Read once per
 * use, outside the timed queries.
 */
const vectorLayout = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const layout = yield* embeddingLayout.pipe(Effect.orDie)
  const kind = indexKindOf(layout.indexdef)
  const override = arg("--ef-search")
  /**
   * The account's nearest 50 ids through HNSW as the backend asks, in a transaction of its own:
   * `hnsw.ef_search` set as the backend sets it (wider on a large library) or to `--ef-search`.
   */
  const nearest50 = (accountId: string, literal: string) =>
    sql.withTransaction(Effect.gen(function*() {
      const pool = yield* setEfSearch(sql, kind, override === undefined ? undefined : Number(override))
      return yield* nearestRows(sql, kind, {
        literal,
        select: sql.literal("id::text AS id"),
        where: sql`account_id = ${accountId}`,
        depth: 50,
        pool
      })
    })).pipe(Effect.orDie)
  return { pgvector: layout.column === "vector", kind, nearest50 }
})

const program = Effect.gen(function*() {
  // The embedded database reads its relations into its cache in the background after start
  // (BufferPrewarm); a service answers questions long after that, so queries are timed after it.
  const prewarmStarted = performance.now()
  if (!process.argv.includes("--no-prewarm-wait")) yield* (yield* BufferPrewarm).done
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}; cache prewarm waited ${(performance.now() - prewarmStarted).toFixed(0)} ms; ${databaseRss()}`)
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
      `→ ${((embedMs / 1000) * 3600 / audioSeconds).toFixed(1)} s of CPU (${embedThreads} thread${embedThreads === 1 ? "" : "s"}) per audio hour, ` +
      `${(embedMs / passages.length).toFixed(1)} ms per passage`
  )

  // — index throughput and query latency —
  const pool: Array<PassageDocument> = passages.map((p, i) => ({ ...p, embedding: vectors[i]! }))
  const poolSeconds = Math.ceil(audioSeconds + 1)
  if (embedOnly) {
    yield* corpusJobs(arg("--corpus") ?? "", bulk ?? 1_000_000, pool)
    return
  }
  /**
   * `--varied`: two random sentences of the quality library are added to every bulk passage's
   * text (a segment's moment says the same), so texts are nearly all distinct and a common
   * word's matches differ in rank; recall@10 then tests the full-text cap. Vectors stay those
   * of the original text.
   */
  const varied = (d: PassageDocument): PassageDocument => {
    if (!process.argv.includes("--varied")) return d
    const pick = () => allSentences[Math.floor(Math.random() * allSentences.length)]!
    const text = `${d.text} ${pick()} ${pick()}`
    return d.kind === "segment" ? { ...d, text, moments: [{ ...d.moments[0]!, text }] } : { ...d, text }
  }
  const shifted = (d: PassageDocument, by: number): PassageDocument => ({
    ...d,
    start: d.start + by,
    end: d.end + by,
    moments: d.moments.map((m) => ({ ...m, start: m.start + by, end: m.end + by }))
  })
  let accountId: string = randomUUID()
  let stored = 0
  const p = (values: ReadonlyArray<number>) => `p50 ${percentile(values, 50).toFixed(1)} ms, p99 ${percentile(values, 99).toFixed(1)} ms`
  /** 100 questions through `SearchIndex.search`, with the query embedding and the first candidate list timed apart. */
  const measureQueries = Effect.fnUntraced(function*() {
    const latencies: Array<number> = []
    const embedding: Array<number> = []
    const firstList: Array<number> = []
    const momentList: Array<number> = []
    const hitEmbedding: Array<number> = []
    const byQuestion = new Map<string, Array<number>>()
    // One search outside the set first (its words match passages no question of the set
    // is after): the process's first query also pays for code paths and statements run for
    // the first time, once per process, not per question.
    const w0 = performance.now()
    yield* index.search({ accountId, q: "how much will the repairs of the pier cost", limit: 10 })
    const warmUp = performance.now() - w0
    for (let i = 0; i < QUERIES; i++) {
      const q = questions[i % questions.length]!
      const q0 = performance.now()
      yield* index.search({ accountId, q, limit: 10 })
      const q1 = performance.now()
      const [vector] = yield* embedder.embed([q])
      const q2 = performance.now()
      const first = yield* backend.candidates({ accountId, q, vector: vector!, limit: 40 })
      const q3 = performance.now()
      const windows = first.filter((c) => c.passage.kind === "window")
      if (windows.length > 0) {
        yield* backend.candidates({
          accountId,
          q,
          vector: vector!,
          limit: 100,
          kind: "segment",
          jobIds: Array.from(new Set(windows.map((c) => c.passage.jobId))),
          within: windows.map((c) => ({ jobId: c.passage.jobId, start: c.passage.start, end: c.passage.end }))
        })
      }
      const q4 = performance.now()
      yield* embedder.embed(first.slice(0, 10).map((c) => c.passage.moments[0]!.text))
      const q5 = performance.now()
      latencies.push(q1 - q0)
      byQuestion.set(q, [...(byQuestion.get(q) ?? []), q1 - q0])
      embedding.push(q2 - q1)
      firstList.push(q3 - q2)
      momentList.push(q4 - q3)
      hitEmbedding.push(q5 - q4)
    }
    // The first asking of a question meets pages no earlier one read (the service's usual
    // case: most questions are asked once); later askings of it find them cached.
    const first = Array.from(byQuestion.values(), (ms) => ms[0]!)
    const repeats = Array.from(byQuestion.values(), (ms) => ms.slice(1)).flat()
    return `load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}; ${databaseRss()}; warm-up search ${warmUp.toFixed(0)} ms (not counted); search ${p(latencies)} (${QUERIES} queries; first asking of each question p50 ${percentile(first, 50).toFixed(1)} / ` +
      `max ${Math.max(...first).toFixed(1)} ms "${Array.from(byQuestion.keys())[first.indexOf(Math.max(...first))]}", repeats ${repeats.length === 0 ? "none" : p(repeats)}); of which: query embedding ${p(embedding)}, ` +
      `first candidate list (vector + full text + fusion) ${p(firstList)}, moment list (segments inside the ` +
      `candidate windows) ${p(momentList)}, relevance embedding of 10 hits ${p(hitEmbedding)}; slowest questions (median): ` +
      Array.from(byQuestion, ([q, ms]) => [q, percentile(ms, 50)] as const).sort((a, b) => b[1] - a[1]).slice(0, 4)
        .map(([q, ms]) => `"${q}" ${ms.toFixed(0)} ms`).join(", ") + "; " + (yield* recallAt10())
  })
  /**
   * `--spans [Q]` (with --data): where one search's time goes. Each question (Q, or every one of
   * the set) is searched three times and the third search's spans are printed as a tree: the
   * use case's own (`Effect.fn`), the backend's and each SQL statement's, with its duration.
   */
  const printSpans = Effect.fnUntraced(function*(asked: ReadonlyArray<string>) {
    for (const q of asked) {
      let spans: Array<Tracer.NativeSpan> = []
      const tracer = Tracer.make({
        span(options) {
          const span = new Tracer.NativeSpan(options)
          spans.push(span)
          return span
        }
      })
      for (let run = 0; run < 3; run++) {
        spans = []
        yield* index.search({ accountId, q, limit: 10 }).pipe(Effect.withTracer(tracer))
      }
      const depthOf = (span: Tracer.AnySpan): number =>
        span._tag === "Span" ? Option.match(span.parent, { onNone: () => 0, onSome: (p) => 1 + depthOf(p) }) : 0
      const ms = (span: Tracer.NativeSpan) =>
        span.status._tag === "Ended" ? Number(span.status.endTime - span.startTime) / 1e6 : Number.NaN
      console.log(`\n"${q}"`)
      for (const span of spans) {
        const statement = span.attributes.get("db.query.text") ?? span.attributes.get("db.statement")
        const text = typeof statement === "string" ? " " + statement.replace(/\s+/gu, " ").slice(0, 110) : ""
        console.log(`${"  ".repeat(depthOf(span))}${ms(span).toFixed(1).padStart(7)} ms ${span.name}${text}`)
      }
    }
  })
  /**
   * recall@10 of the search as it runs against the exact reference (`exact: true`: exact
   * vector order, every full-text match ranked), hit by hit (same job, same moment), over
   * every distinct question, plus the reference's own latency.
   */
  const recallAt10 = Effect.fnUntraced(function*() {
    if (process.argv.includes("--no-recall")) return "recall not measured"
    // Fresh: layers are memoised by identity, so `SearchIndex.layer` alone would hand back the
    // SearchIndex already built over the fast backend and recall@10 compare it with itself
    // (it did until 2026-11-26 session 9: every earlier recall@10 figure was 1.000 by construction).
    const referenceLayer = Layer.fresh(SearchIndex.layer).pipe(Layer.provideMerge(Layer.fresh(PostgresSearchBackend.layer({ exact: true }))))
    return yield* Effect.gen(function*() {
      const reference = yield* SearchIndex
      const referenceBackend = yield* SearchBackend
      const sql = yield* SqlClient.SqlClient
      let found = 0
      let sameText = 0
      let shown = 0
      let shownTotal = 0
      let total = 0
      const slow: Array<number> = []
      const misses: Array<string> = []
      for (const q of questions) {
        const fast = yield* index.search({ accountId, q, limit: 10 })
        const t = performance.now()
        const exact = yield* reference.search({ accountId, q, limit: 10 })
        slow.push(performance.now() - t)
        const keys = new Set(fast.map((h) => `${h.job_id}@${h.start}-${h.end}`))
        const kept = exact.filter((h) => keys.has(`${h.job_id}@${h.start}-${h.end}`)).length
        if (kept < exact.length) {
          // Where the difference starts: the first candidate list (40, fused) of both backends,
          // and the vector list alone (nearest 50 through HNSW as the backend asks it, against
          // the exact order).
          const [vector] = yield* embedder.embed([q])
          const key = (c: { readonly passage: { readonly jobId: string; readonly kind: string; readonly start: number } }) =>
            `${c.passage.jobId}@${c.passage.kind}${c.passage.start}`
          const fastFirst = new Set((yield* backend.candidates({ accountId, q, vector: vector!, limit: 40 })).map(key))
          const exactFirst = (yield* referenceBackend.candidates({ accountId, q, vector: vector!, limit: 40 })).map(key)
          let vectorKept = ""
          const layout = yield* vectorLayout
          if (layout.pgvector) {
            const literal = `[${Array.from(vector!).join(",")}]`
            const approximate = yield* layout.nearest50(accountId, literal)
            // `+ 0` keeps the planner off the index: the exact order.
            const exactIds = yield* sql<{ id: string }>`SELECT id::text AS id FROM search_passages WHERE account_id = ${accountId}
              ORDER BY (embedding <=> ${literal}::vector) + 0 LIMIT 50`.pipe(Effect.orDie)
            const ids = new Set(approximate.map((r) => r.id))
            vectorKept = `, vector ${exactIds.filter((r) => ids.has(r.id)).length}/50`
          }
          misses.push(`"${q}" ${kept}/${exact.length} (first list ${exactFirst.filter((k) => fastFirst.has(k)).length}/${exactFirst.length}${vectorKept})`)
        }
        found += kept
        // What a caller gets by default: hits at or above the API's default `min_relevance`.
        const shownKeys = new Set(fast.filter((h) => h.relevance >= DEFAULT_MIN_RELEVANCE).map((h) => `${h.job_id}@${h.start}-${h.end}`))
        const exactShown = exact.filter((h) => h.relevance >= DEFAULT_MIN_RELEVANCE)
        shown += exactShown.filter((h) => shownKeys.has(`${h.job_id}@${h.start}-${h.end}`)).length
        shownTotal += exactShown.length
        // The bulk library repeats each text in hundreds of jobs: a fast hit may be another
        // copy of the reference's (same words, another job); counted apart.
        const texts = new Set(fast.map((h) => h.text))
        sameText += exact.filter((h) => texts.has(h.text)).length
        total += exact.length
      }
      return `recall@10 vs exact ${(found / total).toFixed(3)} (${found}/${total} hits, ${questions.length} questions; ` +
        `same text ${(sameText / total).toFixed(3)}; hits at the default min_relevance ${DEFAULT_MIN_RELEVANCE}: ` +
        `${shownTotal === 0 ? "none" : (shown / shownTotal).toFixed(3)} (${shown}/${shownTotal}); ` +
        `exact reference p50 ${percentile(slow, 50).toFixed(0)} ms; short: ${misses.join(", ") || "none"})`
    }).pipe(Effect.provide(referenceLayer), Effect.orDie)
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

  if (bulk !== undefined) {
    const sql = yield* SqlClient.SqlClient
    const { pgvector } = yield* vectorLayout
    const [have] = yield* sql<{ n: number; account: string | null }>`SELECT count(*)::int AS n, min(account_id::text) AS account
      FROM search_passages`.pipe(Effect.orDie)
    if (have !== undefined && have.n >= bulk && have.account !== null) {
      // `--data`: the library of an earlier run is measured again as it is.
      accountId = have.account
      stored = have.n
      console.log(`${stored} passages already stored in ${dataDir} (pgvector: ${pgvector}): measuring only`)
      if (process.argv.includes("--explain")) {
        // Where a query's time goes: the plans of today's two candidate lists for two questions.
        const covers: Record<string, string> = {
          "library": "'librari' | 'library'",
          "what did they decide about hiring": "('decid' | 'decide') & ('hire' | 'hiring')"
        }
        for (const q of process.argv.includes("--explain-cover") ? Object.keys(covers) : [questions[0]!, questions[3]!]) {
          const [vector] = yield* embedder.embed([q])
          const [built] = yield* sql<{ tq: string }>`SELECT string_agg(quote_literal(lexeme), ' | ') AS tq FROM (
              SELECT DISTINCT unnest(tsvector_to_array(to_tsvector(c::regconfig, ${q}))) AS lexeme
              FROM unnest(string_to_array('simple,english', ',')) AS c) AS l`.pipe(Effect.orDie)
          const cover = covers[q] ?? built!.tq
          const plans = [
            sql`EXPLAIN (ANALYZE, BUFFERS) SELECT id, text FROM search_passages
              WHERE tsv @@ ${cover}::tsquery AND account_id = ${accountId}
              ORDER BY ts_rank_cd(tsv, ${built!.tq}::tsquery) DESC, id LIMIT 200`,
            sql`EXPLAIN (ANALYZE, BUFFERS) ${(yield* vectorLayout).nearest50(accountId, `[${Array.from(vector!).join(",")}]`)}`
          ]
          console.log(`\n"${q}" → ${built!.tq}`)
          for (const plan of plans) {
            const rows = yield* plan.pipe(Effect.orDie)
            console.log(rows.map((r) => Object.values(r)[0]).join("\n"))
          }
        }
        return
      }
      if (process.argv.includes("--spans")) {
        yield* printSpans(arg("--spans")?.startsWith("--") === false ? [arg("--spans")!] : questions)
        return
      }
      console.log(`${stored} passages: ` + (yield* measureQueries()))
      return
    }
    yield* sql`DROP INDEX IF EXISTS search_passages_embedding`.pipe(Effect.orDie)
    yield* sql`DROP INDEX IF EXISTS search_passages_tsv`.pipe(Effect.orDie)
    const corpusFile = arg("--corpus")
    const corpus = corpusFile === undefined ? undefined : yield* corpusJobs(corpusFile, bulk, pool)
    const loadStarted = performance.now()
    const created = new Date()
    while (corpus !== undefined && stored < bulk) {
      const job = corpus.shift()!
      const jobId = randomUUID()
      for (let at = 0; at < job.length; at += 500) {
        const rows = job.slice(at, at + 500).map((d) => ({
          account_id: accountId,
          job_id: jobId,
          kind: d.kind,
          start: d.start,
          end: d.end,
          speaker: d.speaker,
          text: d.text,
          moments: JSON.stringify(d.moments),
          filename: `${jobId}.wav`,
          language: "en",
          ts_config: "english",
          created_at: created,
          embedding: pgvector
            ? `[${Array.from(d.embedding).join(",")}]`
            : new Uint8Array(d.embedding.buffer, d.embedding.byteOffset, d.embedding.byteLength)
        }))
        yield* sql`INSERT INTO search_passages ${sql.insert(rows as [typeof rows[0] & {}])}`.pipe(Effect.orDie)
      }
      const before = stored
      stored += job.length
      if (Math.floor(stored / 10_000) > Math.floor(before / 10_000)) process.stderr.write(`bulk load: ${stored}/${bulk}\n`)
    }
    while (stored < bulk) {
      const jobId = randomUUID()
      const rows = Array.from({ length: Math.min(500, bulk - stored) }, (_, i) => {
        // Each pass over the pool inside one job continues its timeline (a job is one long
        // recording), so a window holds its own ~10 segments, not every copy's.
        const base = varied(shifted(pool[(stored + i) % pool.length]!, Math.floor(i / pool.length) * poolSeconds))
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
          embedding: pgvector
            ? `[${Array.from(noisy(base.embedding, 0.03)).join(",")}]`
            : (() => {
              const v = noisy(base.embedding, 0.03)
              return new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
            })()
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
    const hnswStarted = performance.now()
    const migrationsKind = yield* indexKindHere.pipe(Effect.orDie)
    const kind = indexAsked ?? migrationsKind
    if (pgvector) {
      // The default 64 MB cannot hold the graph of 100k 384-d vectors; pgvector then builds far
      // slower. 1M needs ~1.1 GB at half precision (vectors and neighbour lists), ~2 GB at full;
      // PGlite's WASM memory stops at 2 GB, so it keeps 512 MB (its sign-bit graph of 1M, ~0.7 kB
      // an element by estimate, outgrows that: 1,704 s against 73 s at 100k). One transaction: on
      // a server's pool the SET and the build must share a connection.
      const memory = databaseUrl !== undefined && bulk > 200_000 ? "3GB" : "512MB"
      yield* sql.withTransaction(buildHnswIndex(kind, memory)).pipe(Effect.orDie)
    }
    const hnswSeconds = (performance.now() - hnswStarted) / 1000
    yield* sql`ANALYZE search_passages`.pipe(Effect.orDie)
    if (pgvector && kind !== migrationsKind) {
      // The backend chose its ORDER BY from the index the migrations built, at start.
      console.log(
        `${stored} passages loaded in ${loadSeconds.toFixed(1)} s, HNSW (${kind}) built in ` +
          `${hnswSeconds.toFixed(1)} s; run again with --data ${dataDir} to measure it`
      )
      return
    }
    console.log(
      `${stored} passages (bulk; ${
        corpus === undefined
          ? "SYNTHETIC vectors = real passage embeddings + noise, real texts"
          : `distinct texts of ${corpusFile}, each embedded`
      }): loaded in ` +
        `${loadSeconds.toFixed(1)} s, GIN built in ${ginSeconds.toFixed(1)} s, HNSW built in ${hnswSeconds.toFixed(1)} s; ` +
        (yield* measureQueries())
    )
    if (!pgvector) return
    // The vector list alone (the HNSW share of the first candidate list), as the backend asks it.
    const vectorOnly: Array<number> = []
    const { nearest50 } = yield* vectorLayout
    for (let i = 0; i < QUERIES; i++) {
      const [vector] = yield* embedder.embed([questions[i % questions.length]!])
      const t = performance.now()
      yield* nearest50(accountId, `[${Array.from(vector!).join(",")}]`)
      vectorOnly.push(performance.now() - t)
    }
    console.log(`${stored} passages: HNSW nearest 50 alone ${p(vectorOnly)}`)
  }
})

/**
 * Embeds `texts[from, to)` 100 at a time, handing each slice's vectors to `take(at, vectors)`;
 * every 10k passages and at the end it reports progress on stderr and calls `flush(since, done)`
 * with the passages taken since the last flush. One loop for a whole corpus and for a worker's share.
 */
const embedRange = Effect.fnUntraced(function*(
  texts: ReadonlyArray<string>,
  from: number,
  to: number,
  take: (at: number, vectors: ReadonlyArray<Float32Array>) => void,
  flush: (since: number, done: number) => void
) {
  const embedder = yield* Embedder
  const started = performance.now()
  let since = from
  for (let at = from; at < to; at += 100) {
    const done = Math.min(at + 100, to)
    take(at, yield* embedder.embed(texts.slice(at, done)))
    if (done - since >= 10_000 || done === to) {
      process.stderr.write(`embedding ${from}:${to}: ${done - from}/${to - from} (${((performance.now() - started) / 1000).toFixed(0)} s)\n`)
      flush(since, done)
      since = done
    }
  }
})

/**
 * `--corpus`: jobs cut from the file's sentences until `size` passages (the quality pool once
 * first), each passage embedded. With `--data` the vectors are kept in DIR/corpus.f32 in passage
 * order, written every 10k passages: jobs are cut in the file's order, so the first K passages of
 * any size are the same, and a larger library (or a run cut short) embeds only the passages past
 * what the file holds. DIR/corpus.f32.json names the count and the last embedded text; a file
 * whose passages differ there is embedded again from the start. `--embed-only` stops after the
 * embedding, with as many passages as the file's sentences give (at most `size`).
 */
const corpusJobs = Effect.fnUntraced(function*(file: string, size: number, pool: ReadonlyArray<PassageDocument>) {
  const lines = fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "")
  const jobs: Array<Array<Omit<PassageDocument, "embedding">>> = [pool.map(({ embedding: _, ...d }) => d)]
  let count = pool.length
  for (let at = 0; count < size; at += 60) {
    if (at >= lines.length) {
      if (embedOnly) break
      return yield* Effect.die(new Error(`${file}: ${lines.length} sentences give ${count} passages, fewer than ${size}`))
    }
    const passages = cutPassages(transcriptOf(lines.slice(at, at + 60).map((text) => ({ text }))))
      .slice(0, size - count)
    jobs.push(passages)
    count += passages.length
  }
  const texts = jobs.flat().map((d) => d.text)
  const cache = keep === undefined ? undefined : path.join(dataDir, "corpus.f32")
  const flat = new Float32Array(texts.length * 384)
  // Vectors of the cache that are this library's: all it holds when its last text is this
  // library's at that place; a prefix when the cache is larger (the same file is assumed there).
  let have = 0
  if (cache !== undefined && fs.existsSync(cache) && fs.existsSync(`${cache}.json`)) {
    const meta = JSON.parse(fs.readFileSync(`${cache}.json`, "utf8")) as { count: number; last: string }
    if (meta.count > texts.length || texts[meta.count - 1] === meta.last) {
      have = Math.min(meta.count, texts.length, Math.floor(fs.statSync(cache).size / (384 * 4)))
      const fd = fs.openSync(cache, "r")
      fs.readSync(fd, new Uint8Array(flat.buffer, 0, have * 384 * 4), 0, have * 384 * 4, 0)
      fs.closeSync(fd)
    }
  }
  if (have < texts.length) {
    if (cache !== undefined) {
      // Past the recorded count a run that stopped between the two writes may have left vectors.
      fs.closeSync(fs.openSync(cache, "a"))
      fs.truncateSync(cache, have * 384 * 4)
    }
    const started = performance.now()
    let kept = have
    const range = arg("--embed-range")?.split(":").map(Number)
    if (range !== undefined) {
      // A child of --embed-workers: its share of the passages, raw float32 to --embed-out.
      const out = fs.openSync(arg("--embed-out")!, "w")
      yield* embedRange(texts, range[0]!, range[1]!, (_, vectors) => {
        for (const v of vectors) fs.writeSync(out, new Uint8Array(v.buffer, v.byteOffset, v.byteLength))
      }, () => {})
      fs.closeSync(out)
      return yield* Effect.sync(() => process.exit(0))
    }
    const workers = Number(arg("--embed-workers") ?? 1)
    if (workers > 1 && cache !== undefined) {
      // Measured on these short texts: two intra-op threads gained ~8 % (5.0 against 5.4 ms a
      // passage), and two sessions in one process, each run awaited concurrently, took as long as
      // one after the other (onnxruntime-node's runs did not overlap), so a second core needs a
      // second process. Each child opens its own empty database folder and writes its contiguous
      // share; this process appends them in order.
      const script = process.argv[1]!
      const passed = process.argv.slice(2).filter((a, i, all) =>
        !["--data", "--database-url", "--embed-workers"].includes(a) &&
        !["--data", "--database-url", "--embed-workers"].includes(all[i - 1] ?? "")
      )
      const share = Math.ceil((texts.length - have) / workers)
      const parts = Array.from({ length: workers }, (_, k) => [have + k * share, Math.min(texts.length, have + (k + 1) * share)] as const)
        .filter(([a, b]) => a < b)
      const children = parts.map(([a, b], k) => {
        const folder = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-bench-embed-"))
        const out = path.join(folder, "vectors.f32")
        const child = spawn(process.execPath, [...process.execArgv, script, ...passed, ...(embedOnly ? [] : ["--embed-only"]), "--data", path.join(folder, "db"), "--embed-range", `${a}:${b}`, "--embed-out", out], {
          stdio: ["ignore", "ignore", "inherit"]
        })
        return Effect.callback<string>((resume) => {
          child.on("exit", (code) => resume(code === 0 ? Effect.succeed(out) : Effect.die(new Error(`embedding worker ${k} (${a}:${b}) exited with ${code}`))))
        })
      })
      const outs = yield* Effect.all(children, { concurrency: "unbounded" })
      for (const [k, out] of outs.entries()) {
        const [a, b] = parts[k]!
        const bytes = fs.readFileSync(out)
        flat.set(new Float32Array(bytes.buffer, bytes.byteOffset, (b - a) * 384), a * 384)
        fs.appendFileSync(cache, bytes)
        fs.writeFileSync(`${cache}.json`, JSON.stringify({ count: b, last: texts[b - 1] }))
        fs.rmSync(path.dirname(out), { recursive: true, force: true })
      }
      kept = texts.length
    }
    yield* embedRange(texts, kept, texts.length, (at, vectors) => vectors.forEach((v, j) => flat.set(v, (at + j) * 384)), (from, done) => {
      if (cache === undefined) return
      fs.appendFileSync(cache, new Uint8Array(flat.buffer, from * 384 * 4, (done - from) * 384 * 4))
      fs.writeFileSync(`${cache}.json`, JSON.stringify({ count: done, last: texts[done - 1] }))
    })
    console.log(`corpus: ${texts.length - have} passages embedded in ${((performance.now() - started) / 1000).toFixed(0)} s`)
  }
  let i = 0
  return jobs.map((job) => job.map((d) => ({ ...d, embedding: flat.subarray(384 * i, 384 * ++i) })))
})

const keep = arg("--data")
const indexAsked = arg("--index") as IndexKind | undefined
if (indexAsked !== undefined && !INDEX_KINDS.includes(indexAsked)) {
  throw new Error(`--index ${indexAsked}: one of ${INDEX_KINDS.join(", ")}`)
}
const embedOnly = process.argv.includes("--embed-only")
const databaseUrl = arg("--database-url")
const dataDir = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-bench-search-"))
fs.mkdirSync(dataDir, { recursive: true })
const database = DatabaseLayer.pipe(Layer.provide(Layer.merge(
  StorageConfig.layerWith({ dataDir }),
  DatabaseConfig.layerWith({ databaseUrl: databaseUrl === undefined ? Option.none() : Option.some(Redacted.make(databaseUrl)) })
)))
// One intra-op thread, as the service's queries embed; --embed-threads 2 is for a corpus's embedding
// alone on the machine (6.7 ms per corpus passage with 2 on an AVX-512 VNNI core pair).
const embedThreads = Number(arg("--embed-threads") ?? 1)
const embedder = Embedder.layer({ modelsDir, threads: embedThreads }).pipe(
  Layer.provide(OnnxRuntime.layer({ threads: embedThreads, idleUnloadMs: 60_000 }))
)
const exact = process.argv.includes("--exact")
// As the service: Apertium's English–Spanish pair when installed under this folder, `none` for none.
const layer = SearchIndex.layer.pipe(
  Layer.provideMerge(QueryTranslator.layerFor(arg("--apertium") ?? QueryTranslator.defaultDir)),
  Layer.provideMerge(PostgresSearchBackend.layer({
    efSearch: arg("--ef-search") === undefined ? undefined : Number(arg("--ef-search")),
    lexicalRanked: arg("--lexical-ranked") === undefined ? undefined : Number(arg("--lexical-ranked"))
  })),
  Layer.provideMerge(embedder),
  Layer.provideMerge(exact ? withoutPgvector.pipe(Layer.provideMerge(database)) : database)
)

await Effect.runPromise(program.pipe(Effect.provide(layer), Effect.scoped))
if (keep === undefined) fs.rmSync(dataDir, { recursive: true, force: true })
