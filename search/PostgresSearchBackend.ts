/**
 * Search passages in Postgres (migration 0006): cosine nearest neighbours through pgvector
 * (HNSW) or, on a server without it, an exact scan done here; full-text through
 * `tsvector` in the job language's configuration; both lists fused by reciprocal rank.
 *
 * Full-text matching is OR over the question's lexemes, ranked by `ts_rank_cd`: a
 * natural-language question rarely has all its words in one passage. The question is
 * stemmed as `simple`, English and its own language when recognised (or only in the
 * requested language), so an English question meets English stems and a Spanish one
 * Spanish stems.
 */
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { EMBEDDING_DIMENSIONS } from "./Embedder.ts"
import { foldWord, queryTerms, questionLanguage, termMatches, wordPattern } from "./Highlights.ts"
import { cosineTo, type IndexKind, indexKindOf, nearestRows, nearestTo } from "./HnswIndex.ts"
import type { Moment } from "./Passages.ts"
import { embeddingLayout } from "./PgvectorLayout.ts"
import { type Candidate, type CandidateQuery, type JobMeta, type LanguageBound, type PassageDocument, passageRecord, SearchBackend, type StoredPassage } from "./SearchBackend.ts"

/** ISO 639-1 → Postgres text search configuration (those shipped since Postgres 13). */
const configByLanguage: Readonly<Record<string, string>> = {
  ar: "arabic",
  da: "danish",
  de: "german",
  el: "greek",
  en: "english",
  es: "spanish",
  fi: "finnish",
  fr: "french",
  ga: "irish",
  hu: "hungarian",
  id: "indonesian",
  it: "italian",
  lt: "lithuanian",
  ne: "nepali",
  nl: "dutch",
  no: "norwegian",
  pt: "portuguese",
  ro: "romanian",
  ru: "russian",
  sr: "serbian",
  sv: "swedish",
  ta: "tamil",
  tr: "turkish"
}

/**
 * RRF constant. The usual 60 makes the top of each list nearly flat (1/61 vs 1/65), so a
 * passage appearing in both lists at middling ranks beats the clear semantic winner;
 * 20 keeps the top few ranks distinct. Chosen on the library quality test.
 */
export const RRF_K = 20
/** Up to this many named jobs, their passages are ranked exactly instead of through HNSW. */
const EXACT_JOBS = 200
/**
 * At most this many full-text matches are ranked by `ts_rank_cd` (the first found, in
 * storage order, i.e. mostly the oldest): ranking reads each match's row (a page each,
 * often from outside the buffer cache), and one common word or pair can match a tenth of
 * a large library (11,300 rows at 100k passages: 110 ms; 2,000 ranked left a one-word
 * question at ~95 ms, 1,000 at ~67). 300: first list p99 138 → 100 ms at 100k (load
 * 3.7). Beyond it the full-text list is a sample; the vector list is unaffected. Its cost
 * in recall (bench/search.ts --varied, against the exact reference): 0.775 with the cap,
 * 0.805 with every match ranked (the "1.000" measured before compared the search with itself).
 */
const LEXICAL_RANKED = 300
/** Questions whose stems are kept (see `stemmed`). */
const STEMMED_QUESTIONS = 256
/** Each list is cut at this depth before fusion. */
const LIST_DEPTH = 50
/**
 * `hnsw.ef_search` of the vector list: how many candidates HNSW keeps while walking its graph.
 * Measured on a library of 100k distinct passages with real MiniLM vectors (bench/search.ts
 * --corpus, PGlite, 2 cores, load ~1): at 100 HNSW returned as few as 16 of the exact 50
 * nearest for some questions (windows overlap their segments, so the graph holds many
 * near-duplicates) and recall@10 of the whole search against the exact reference was 0.760;
 * 200: 0.900; 400: 0.955 (1.000 of the hits a caller gets at the default min_relevance).
 * Cost at 400: search p50 36 → 50 ms, p99 61 → 83 ms (300 queries). On another corpus (session
 * 14) 400 was not enough with the default build, whatever the ef_search short of 1000: the graph
 * itself missed a small topic; the index is built with ef_construction 128 since (migration 0023).
 */
export const EF_SEARCH = 400

/**
 * `hnsw.ef_search` of a sign-bit walk (PGlite since migration 0025), also the rows it hands to the
 * cosine ordering. Measured (2026-11-27, bench/search.ts --corpus, PGlite, 100k passages of real
 * MiniLM vectors, 300 queries): at 400 recall@10 of the whole search against the exact one was
 * 0.914 (0.930 of the hits at the default min_relevance; a weather question with no answer in the
 * library kept 4 of its exact 50 nearest), p50 24.2 / p99 46.2 ms; at 800 0.976 (1.000), p50
 * 29.3 / p99 58.3 ms, as the full-precision index at 400 (0.976, p50 27.3 / p99 48.4 ms).
 */
export const BIT_EF_SEARCH = 800

/**
 * From this many stored passages (the table's `reltuples`: autovacuum keeps it on a server, the
 * backend's own ANALYZE every 20 % of growth on PGlite) the walk widens: `LARGE_EF_SEARCH` at
 * half precision, `LARGE_BIT_EF_SEARCH` (pgvector's maximum) over sign bits. Measured
 * (2026-11-27, bench/search.ts --corpus, Postgres 15 + pgvector 0.8, 1M real MiniLM vectors,
 * 300 queries; recall@10 of the whole search against the exact one):
 * - half precision: 100k at 400 0.981, p50 16.8 / p99 30.2 ms, at 800 0.995, 23.6 / 59.3 ms;
 *   1M at 400 0.948 (one question kept 26 of its exact 50 nearest), p50 36.5 / p99 101.7 ms,
 *   at 800 0.976, 53.8–55.6 / 89.9–93.2 ms;
 * - sign bits, the index PGlite builds, built on the server to measure its recall: 1M at 800
 *   0.943 (0.974 at the default min_relevance), at 1000 0.962 (0.987).
 */
export const LARGE_LIBRARY = 500_000
export const LARGE_EF_SEARCH = 800
export const LARGE_BIT_EF_SEARCH = 1000

/** The vector list's `hnsw.ef_search` for the index the migrations built, on a library under `LARGE_LIBRARY` or from it (`large`). */
export const efSearchFor = (kind: IndexKind, large: boolean): number =>
  kind === "bit" ? (large ? LARGE_BIT_EF_SEARCH : BIT_EF_SEARCH) : large ? LARGE_EF_SEARCH : EF_SEARCH

/**
 * Sets `hnsw.ef_search` for the current transaction (`override`, or the rule above for `kind`)
 * and returns the value set, which a sign-bit walk also takes as its row count. One statement:
 * the table's size is read where it is set.
 */
export const setEfSearch = (sql: SqlClient.SqlClient, kind: IndexKind, override?: number) =>
  sql<{ ef_search: string }>`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', ${
    override !== undefined
      ? sql`${String(override)}`
      : sql`CASE WHEN (SELECT reltuples FROM pg_class WHERE oid = 'search_passages'::regclass) >= ${LARGE_LIBRARY}
          THEN ${String(efSearchFor(kind, true))} ELSE ${String(efSearchFor(kind, false))} END`
  }, true) AS ef_search`.pipe(Effect.map((rows) => Number(rows[0]!.ef_search)))

const Row = Schema.Struct({
  id: Schema.Union([Schema.Number, Schema.String, Schema.BigInt]),
  job_id: Schema.String,
  filename: Schema.NullOr(Schema.String),
  kind: Schema.Literals(["window", "segment"]),
  start: Schema.Number,
  end: Schema.Number,
  speaker: Schema.NullOr(Schema.String),
  text: Schema.String,
  moments: Schema.Unknown,
  cosine: Schema.optional(Schema.Union([Schema.Number, Schema.String]))
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))

const vectorLiteral = (v: Float32Array): string => `[${Array.from(v).join(",")}]`
const vectorBytes = (v: Float32Array): Uint8Array => new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength))

const dotBytes = (bytes: Uint8Array, q: Float32Array): number => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let sum = 0
  for (let i = 0; i < q.length; i++) sum += view.getFloat32(i * 4, true) * q[i]!
  return sum
}

/**
 * The full-text list keeps passages holding at least half of the question's content
 * words (all of them for two words or fewer: "library open" needs both). One shared
 * common word ("build", "save") says nothing about a paraphrased question, yet its rank
 * would outweigh a semantic rank in the fusion. A question in another language keeps
 * every full-text match: there the (English-only) embedding carries little.
 */
const wellCovered = <R extends { readonly text: string }>(q: string, rows: ReadonlyArray<R>): ReadonlyArray<R> => {
  const terms = queryTerms(q)
  if (!coverageFiltered(q)) return rows
  const needed = terms.length <= 2 ? terms.length : Math.ceil(terms.length / 2)
  return rows.filter((row) => {
    const words = Array.from(row.text.matchAll(/[\p{L}\p{N}]+/gu), (m) => foldWord(m[0]))
    return terms.filter((t) => words.some((w) => termMatches(t, w))).length >= needed
  })
}

const englishQuestion = (q: string): boolean => questionLanguage(q) !== "es"

/** Whether `wellCovered` can drop full-text rows of this question (else it keeps them all). */
const coverageFiltered = (q: string): boolean => queryTerms(q).length > 1 && englishQuestion(q)

/** One original spelling per content word of the question (see `queryTerms`). */
export const contentWords = (q: string): ReadonlyArray<string> => {
  const byTerm = new Map<string, string>()
  for (const m of q.matchAll(wordPattern)) {
    const term = foldWord(m[0])
    if (!byTerm.has(term) && queryTerms(m[0]).length > 0) byTerm.set(term, m[0])
  }
  return Array.from(byTerm.values())
}

/** Above this many combinations the coverage rule is left to `wellCovered` alone. */
const MAX_COVER_COMBINATIONS = 64

/**
 * "At least `k` of `items`" as a tsquery, factored on each item in turn: (first & k − 1 of the
 * rest) | (k of the rest). The same passages as the OR of every k-combination, but Postgres
 * evaluates it per candidate item with short-circuits, so a passage lacking the first word skips
 * every clause holding it. Measured (2026-11-28, PGlite, 1M synthetic passages, "How many metres
 * of cliff loses the coast every year?": 4 of 7 words, 35 combinations, 22,599 matches among
 * ~150k passages holding any of the words): the GIN bitmap scan 92 → 54 ms.
 */
const atLeast = (k: number, items: ReadonlyArray<string>): string => {
  if (k === 1) return items.length === 1 ? items[0]! : `(${items.join(" | ")})`
  if (k === items.length) return `(${items.join(" & ")})`
  const [first, ...rest] = items
  const withFirst = `(${first} & ${atLeast(k - 1, rest)})`
  return rest.length < k ? withFirst : `(${withFirst} | ${atLeast(k, rest)})`
}

const binomial = (n: number, k: number): number => {
  let c = 1
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i
  return Math.round(c)
}

/**
 * The tsquery that selects the full-text candidates, \`groups\` being each content word's
 * lexemes ("(a | b)") in the question's configurations. Only content words: the
 * question's function words ("the", "is", kept by the \`simple\` configuration) match
 * almost every passage, and ranking those by \`ts_rank_cd\` was most of a query at 100k
 * passages (11k rows read and ranked, 180 ms). For an English question the coverage rule
 * of \`wellCovered\` is asked of the GIN index itself: any \`needed\` of the words
 * together (\`atLeast\`: the OR of every combination, factored), while the combinations stay
 * few. Undefined: no content word (the question's own lexemes are used, as before).
 */
export const coverQuery = (q: string, groups: ReadonlyArray<string>): string | undefined => {
  if (groups.length === 0) return undefined
  const n = groups.length
  if (n === 1 || !englishQuestion(q)) return groups.join(" | ")
  const needed = n <= 2 ? n : Math.ceil(n / 2)
  if (binomial(n, needed) > MAX_COVER_COMBINATIONS) return groups.join(" | ")
  return atLeast(needed, groups)
}

/** Reciprocal rank fusion: Σ weight / (k + rank) over the lists an item appears in. */
export const reciprocalRankFusion = (
  lists: ReadonlyArray<{ readonly ids: ReadonlyArray<string>; readonly weight: number }>,
  k = RRF_K
): Array<{ readonly id: string; readonly score: number }> => {
  const scores = new Map<string, number>()
  for (const list of lists) {
    list.ids.forEach((id, index) => scores.set(id, (scores.get(id) ?? 0) + list.weight / (k + index + 1)))
  }
  return Array.from(scores, ([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score)
}

export const PostgresSearchBackend = {
  /**
   * `lexicalWeight` scales the full-text list in the fusion (the vector list weighs 1):
   * paraphrased questions share few words with their answer, and OR-matching finds some
   * stray word in many passages, so a full-text rank counts for less than a semantic one
   * (except for a question in another language, where it weighs 1 too).
   */
  layer: (options: {
    readonly lexicalWeight?: number
    /**
     * Rank every candidate in full: exact vector order instead of HNSW, and the full-text
     * list over every passage meeting the coverage rule, all ranked before the rule is
     * applied (no `LEXICAL_RANKED` sample, no cut before the rule). The reference that
     * bench/search.ts measures recall@10 against; slow on a large library.
     */
    readonly exact?: boolean
    /** `hnsw.ef_search` of the vector list (default: `setEfSearch`'s rule). */
    readonly efSearch?: number | undefined
    /** Full-text matches ranked before the list is cut (default `LEXICAL_RANKED`). */
    readonly lexicalRanked?: number | undefined
  } = {}) =>
    Layer.effect(
      SearchBackend,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const lexicalWeight = options.lexicalWeight ?? 0.5
        const exact = options.exact ?? false
        const lexicalRanked = options.lexicalRanked ?? LEXICAL_RANKED
        const layout = yield* embeddingLayout.pipe(Effect.orDie)
        const pgvector = layout.column === "vector"
        // Which HNSW index the migrations built: over the embeddings at half precision (0024, a
        // server) or their sign bits (0025, PGlite). The vector list orders by the index's own
        // expression.
        const indexKind = indexKindOf(layout.indexdef)
        const nearest = (vector: Float32Array) => nearestTo(sql, indexKind, vectorLiteral(vector))
        const installedConfigs = new Set(
          (yield* sql<{ cfgname: string }>`SELECT cfgname FROM pg_ts_config`.pipe(Effect.orDie)).map((r) => r.cfgname)
        )
        const configFor = (language: string | null | undefined): string => {
          const config = language === null || language === undefined
            ? undefined
            : configByLanguage[language.toLowerCase().slice(0, 2)]
          return config !== undefined && installedConfigs.has(config) ? config : "simple"
        }
        // Stemming the question in all 24 configurations cost ~8 ms a query on PGlite;
        // `simple` (exact words, any language), English, and the question's own language
        // when it is recognisably another one cover what the stems can add.
        const questionConfigs = (q: string): ReadonlyArray<string> =>
          Array.from(new Set(["simple", configFor("en"), configFor(questionLanguage(q))]))

        // Warm-up, so the first question after a start does not pay for it: a configuration's
        // dictionaries are loaded on their first use in a session (English: 50–150 ms on
        // PGlite), and the first HNSW and GIN probes read the indexes' entry pages (the
        // first query at 100k passages took 170–360 ms for its vector list, later ones
        // 10–50 ms).
        yield* sql`SELECT to_tsvector(c::regconfig, 'warm') FROM unnest(string_to_array(${
          Array.from(new Set(["simple", configFor("en"), configFor("es")])).join(",")
        }, ',')) AS c`.pipe(Effect.orDie)
        yield* sql`SELECT id FROM search_passages WHERE tsv @@ 'warm'::tsquery LIMIT 1`.pipe(Effect.orDie)
        if (pgvector) {
          const probe = new Float32Array(EMBEDDING_DIMENSIONS).fill(1 / Math.sqrt(EMBEDDING_DIMENSIONS))
          yield* sql`SELECT id FROM search_passages ORDER BY ${nearest(probe)} LIMIT 1`.pipe(Effect.orDie)
        }

        const toStored = (row: typeof Row.Type): StoredPassage => ({
          jobId: row.job_id,
          filename: row.filename,
          kind: row.kind,
          start: row.start,
          end: row.end,
          speaker: row.speaker,
          text: row.text,
          moments: (typeof row.moments === "string" ? JSON.parse(row.moments) : row.moments) as ReadonlyArray<Moment>
        })

        // The planner picks HNSW over an exact scan from the table's row estimates. A server's
        // autovacuum keeps them; PGlite runs no autovacuum, so after every 20% of growth
        // (and at least 1000 rows) the table is analysed here. With stale estimates a
        // 5k-passage account was scanned exactly: 80 ms instead of a few.
        let analysedRows = -1
        let writtenSince = 0
        const keepStatistics = (written: number) =>
          Effect.gen(function*() {
            if (analysedRows < 0) {
              const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM search_passages`
              analysedRows = row?.n ?? 0
            }
            writtenSince += written
            if (writtenSince >= Math.max(1000, analysedRows / 5)) {
              yield* sql`ANALYZE search_passages`
              const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM search_passages`
              analysedRows = row?.n ?? 0
              writtenSince = 0
            }
          })

        const replaceJob = Effect.fn("SearchBackend.replaceJob")(
          function*(accountId: string, jobId: string, meta: JobMeta, documents: ReadonlyArray<PassageDocument>) {
            const tsConfig = configFor(meta.language)
            const rows = documents.map((d) => ({
              ...passageRecord(accountId, jobId, meta, d),
              moments: JSON.stringify(d.moments),
              ts_config: tsConfig,
              created_at: meta.created_at,
              embedding: pgvector ? vectorLiteral(d.embedding) : vectorBytes(d.embedding)
            }))
            yield* sql.withTransaction(Effect.gen(function*() {
              yield* sql`DELETE FROM search_passages WHERE job_id = ${jobId}`
              // Chunks keep a statement under the protocol's 65535-parameter limit.
              for (let i = 0; i < rows.length; i += 500) {
                const chunk = rows.slice(i, i + 500)
                if (chunk.length > 0) yield* sql`INSERT INTO search_passages ${sql.insert(chunk as [typeof chunk[0] & {}])}`
              }
            }))
            yield* keepStatistics(rows.length)
          },
          Effect.orDie
        )

        const removeJob = Effect.fn("SearchBackend.removeJob")(
          function*(jobId: string) {
            yield* sql`DELETE FROM search_passages WHERE job_id = ${jobId}`
          },
          Effect.orDie
        )

        const filters = (query: CandidateQuery) =>
          sql.and([
            sql`account_id = ${query.accountId}`,
            ...(query.kind === undefined ? [] : [sql`kind = ${query.kind}`]),
            // `within` names its jobs (and lies inside `jobIds`): the job list adds nothing but a
            // second bitmap of every row of those jobs (19k rows, 20 ms at 100k).
            ...(query.jobIds === undefined || query.within !== undefined
              ? []
              : query.jobIds.length === 0
              ? [sql`false`]
              : [sql.in("job_id", query.jobIds)]),
            ...(query.excludeJobIds === undefined || query.excludeJobIds.length === 0 ? [] : [sql`NOT ${sql.in("job_id", query.excludeJobIds)}`]),
            ...(query.language === undefined ? [] : [sql`language = ${query.language}`]),
            // `start <= end` adds nothing to the meaning (a moment inside ends by then) but bounds
            // each window's range on the (job_id, start) index: with `start >=` alone every
            // later row of the job was read (11,500 rows for 39 windows at 100k, 190 ms cold;
            // bounded: the ~250 rows inside).
            ...(query.within === undefined
              ? []
              : [sql.or(query.within.map((w) => sql`(job_id = ${w.jobId} AND start >= ${w.start} AND start <= ${w.end} AND "end" <= ${w.end})`))]),
            ...(query.since === undefined ? [] : [sql`created_at >= ${query.since}`]),
            ...(query.until === undefined ? [] : [sql`created_at < ${query.until}`])
          ])
        const columns = sql.literal(`id, job_id::text AS job_id, filename, kind, start, "end", speaker, text, moments`)
        // The query's cosine to each row (for the hits' relevance): computed by pgvector, or
        // here from the row's bytes without it.
        const cosineColumn = (query: CandidateQuery) =>
          pgvector ? cosineTo(sql, vectorLiteral(query.vector)) : sql`embedding`

        /** The rows of `kept` read whole, in `kept`'s order. */
        const wholeRows = (query: CandidateQuery, kept: ReadonlyArray<{ readonly id: unknown }>) =>
          Effect.gen(function*() {
            if (kept.length === 0) return []
            const order = new Map(kept.map((row, i) => [String(row.id), i]))
            const rows = yield* sql`SELECT ${columns}, ${cosineColumn(query)} FROM search_passages
              WHERE ${sql.in("id", kept.map((row) => row.id as string))}`
            return [...rows].sort((a, b) => order.get(String(a["id"]))! - order.get(String(b["id"]))!)
          })

        const semantic = (query: CandidateQuery, depth: number) =>
          pgvector && (exact || query.within !== undefined || (query.jobIds !== undefined && query.jobIds.length <= EXACT_JOBS))
            // A few named jobs: their rows come from the job index and are ranked exactly
            // (by the selected cosine, which keeps the planner off HNSW: it would walk the
            // whole graph's neighbourhood discarding other jobs' rows). Ordering by the
            // selected column computes each row's distance once; a second `<=>` in ORDER BY
            // read every row's vector twice (moment list, 40 windows at 100k: 28–45 → 13–28 ms).
            ? sql`SELECT ${columns}, ${cosineColumn(query)} FROM search_passages WHERE ${filters(query)}
                ORDER BY cosine DESC, id LIMIT ${depth}`
            : pgvector
            ? sql.withTransaction(Effect.gen(function*() {
              // Filtered HNSW scans keep walking the graph until enough rows pass the filter.
              const efSearch = yield* setEfSearch(sql, indexKind, options.efSearch)
              const rows = yield* nearestRows(sql, indexKind, {
                literal: vectorLiteral(query.vector),
                select: columns,
                where: filters(query),
                depth,
                pool: efSearch
              })
              // The index chose the rows; their order is the exact lists' (full-precision cosine,
              // then id for passages of equal text). A walk at half precision, or a relaxed
              // iterative scan, can swap near ties (cosines ~1e-4 apart), and a swapped rank
              // changes the fusion.
              return [...rows].sort((a, b) => Number(b["cosine"]) - Number(a["cosine"]) || Number(a["id"]) - Number(b["id"]))
            }))
            : Effect.gen(function*() {
              // Exact scan: read the matching rows' vectors, keep the best `depth`.
              const all = yield* sql<{ id: string; embedding: Uint8Array }>`SELECT id::text AS id, embedding
                FROM search_passages WHERE ${filters(query)}`
              const best = all
                .map((r) => ({ id: r.id, score: dotBytes(r.embedding, query.vector) }))
                .sort((a, b) => b.score - a.score || Number(a.id) - Number(b.id))
                .slice(0, depth)
              const rows = yield* wholeRows(query, best)
              return rows.map((row, i) => ({ ...row, cosine: best[i]!.score }))
            })

        // Two statements: with the tsquery built in the same statement the planner cannot
        // use the GIN index and tests every row of the account (56 ms at 5k passages).
        // A search asks the full-text list twice with the same question (the candidate windows,
        // then the moments inside them): the question's stems are kept for the last questions
        // instead of a second statement (a round trip to the database process, a few ms on a
        // loaded machine). Stemming depends only on the configurations and the text.
        const stems = new Map<string, { readonly tq: string; readonly groups: ReadonlyArray<string> } | undefined>()
        const stemmed = (configs: ReadonlyArray<string>, words: ReadonlyArray<string>, q: string) =>
          Effect.gen(function*() {
            const key = JSON.stringify([configs, words, q])
            if (stems.has(key)) return stems.get(key)
            const [row] = yield* sql<{ tq: string | null; groups: unknown }>`WITH cfg AS (
                SELECT unnest(string_to_array(${configs.join(",")}, ',')) AS c
              ), words AS (
                SELECT w, ord FROM unnest(string_to_array(${words.join(",")}, ',')) WITH ORDINALITY AS t(w, ord)
              )
              SELECT
                (SELECT string_agg(quote_literal(lexeme), ' | ') FROM (
                  SELECT DISTINCT unnest(tsvector_to_array(to_tsvector(c::regconfig, ${q}))) AS lexeme FROM cfg
                ) AS lexemes) AS tq,
                (SELECT json_agg(alts ORDER BY ord) FROM (
                  SELECT ord, '(' || string_agg(DISTINCT quote_literal(l), ' | ') || ')' AS alts
                  FROM words, cfg, unnest(tsvector_to_array(to_tsvector(c::regconfig, w))) AS l
                  GROUP BY ord
                ) AS g) AS groups`
            const built = row?.tq === null || row?.tq === undefined ? undefined : {
              tq: row.tq,
              groups: (typeof row.groups === "string" ? JSON.parse(row.groups) : row.groups ?? []) as ReadonlyArray<string>
            }
            if (stems.size >= STEMMED_QUESTIONS) stems.delete(stems.keys().next().value!)
            stems.set(key, built)
            return built
          })

        const lexical = (query: CandidateQuery, depth: number) =>
          Effect.gen(function*() {
            const configs = query.language === undefined ? questionConfigs(query.q) : [configFor(query.language)]
            const words = contentWords(query.q)
            const built = yield* stemmed(configs, words, query.q)
            if (built === undefined) return []
            const { tq, groups } = built
            // The exact reference selects by the same rule; until session 12 it matched any lexeme
            // and kept the 200 best-ranked before the coverage rule, so a well-covered passage
            // ranked below 200 single-word matches was missing from the reference, not the search.
            const cover = coverQuery(query.q, groups) ?? tq
            // Deeper than `depth` when the coverage rule can drop rows that rank high on one
            // repeated common word (the well-covered ones may sit below them). Those rows are
            // first read as id and text only, the rule applied, and only the kept `depth` read
            // whole (moments, and the cosine, whose vector is TOASTed: a second page or more per
            // row): 200 whole rows were half of the statement's time (one two-word question at
            // 100k, all pages cached, load 8: 17–24 ms whole, 9–11 ms id and text).
            const filtered = coverageFiltered(query.q)
            const selected = filtered ? sql.literal("id, text") : sql`${columns}, ${cosineColumn(query)}`
            const limit = filtered ? depth * 4 : depth
            // Inside named windows (the moment list) the rows to test are the few hundred in their
            // ranges of the (job_id, start) index; through the GIN index the planner read every
            // match of the library and filtered it by the windows (a four-word question at 100k:
            // 25 ms of a 36–61 ms moment list). `ts_match_vq` is `@@` in a form no index serves.
            const matches = query.within === undefined ? sql`tsv @@ ${cover}::tsquery` : sql`ts_match_vq(tsv, ${cover}::tsquery)`
            const ranked = yield* (exact
              ? sql`SELECT ${selected} FROM search_passages
                WHERE ${matches} AND ${filters(query)}
                ORDER BY ts_rank_cd(tsv, ${tq}::tsquery) DESC, id ${filtered ? sql.literal("") : sql`LIMIT ${limit}`}`
              // Ranked where the matches are read, and only the best `limit` rows fetched
              // (joining the 1,000 matches back by id and carrying their columns through the
              // sort was half of the list's time: one common word at 100k, loaded machine:
              // 80–145 ms → 45–85 ms).
              : sql`WITH found AS (
                  SELECT id, ts_rank_cd(tsv, ${tq}::tsquery) AS rank FROM search_passages
                  WHERE ${matches} AND ${filters(query)} LIMIT ${lexicalRanked}
                ), best AS (SELECT id, rank FROM found ORDER BY rank DESC, id LIMIT ${limit})
                SELECT ${selected} FROM best JOIN search_passages USING (id)
                ORDER BY best.rank DESC, id`)
            const rows = filtered ? yield* wholeRows(query, wellCovered(query.q, ranked as ReadonlyArray<{ id: unknown; text: string }>).slice(0, depth)) : ranked
            return pgvector ? rows : rows.map(({ embedding, ...row }) => ({ ...row, cosine: dotBytes(embedding as Uint8Array, query.vector) }))
          })

        const candidates = Effect.fn("SearchBackend.candidates")(
          function*(query: CandidateQuery) {
            const depth = Math.max(query.limit, LIST_DEPTH)
            const [semanticRows, lexicalRows] = yield* Effect.all([
              Effect.flatMap(semantic(query, depth), decodeRows),
              // At most `depth` rows, the coverage rule applied.
              Effect.flatMap(lexical(query, depth), decodeRows)
            ])
            const byId = new Map<string, typeof Row.Type>()
            for (const row of [...semanticRows, ...lexicalRows]) byId.set(String(row.id), row)
            const fused = reciprocalRankFusion([
              { ids: semanticRows.map((r) => String(r.id)), weight: 1 },
              { ids: lexicalRows.map((r) => String(r.id)), weight: englishQuestion(query.q) ? lexicalWeight : 1 }
            ])
            return fused.slice(0, query.limit).map((f): Candidate => {
              const row = byId.get(f.id)!
              return { passage: toStored(row), score: f.score, cosine: row.cosine === undefined ? undefined : Number(row.cosine) }
            })
          },
          Effect.orDie
        )

        // A skip scan of the (account_id, language, job_id) index (migration 0022): one probe
        // per job, whatever the number of passages. The passages are counted in the same index
        // only when the jobs are few, and only up to the bound.
        const languageJobs = Effect.fn("SearchBackend.languageJobs")(
          function*(accountId: string, language: string, atMost: LanguageBound) {
            const rows = yield* sql<{ job_id: string }>`WITH RECURSIVE jobs AS (
                (SELECT job_id FROM search_passages WHERE account_id = ${accountId} AND language = ${language}
                  ORDER BY job_id LIMIT 1)
                UNION ALL
                SELECT (SELECT p.job_id FROM search_passages p
                  WHERE p.account_id = ${accountId} AND p.language = ${language} AND p.job_id > jobs.job_id
                  ORDER BY p.job_id LIMIT 1)
                FROM jobs WHERE jobs.job_id IS NOT NULL
              )
              SELECT job_id::text AS job_id FROM jobs WHERE job_id IS NOT NULL LIMIT ${atMost.jobs + 1}`
            if (rows.length > atMost.jobs) return { jobIds: rows.slice(0, atMost.jobs).map((r) => r.job_id), more: true, passages: atMost.passages + 1 }
            if (rows.length === 0) return { jobIds: [], more: false, passages: 0 }
            const [counted] = yield* sql<{ passages: number }>`SELECT count(*)::int AS passages FROM (
                SELECT 1 FROM search_passages WHERE account_id = ${accountId} AND language = ${language}
                LIMIT ${atMost.passages + 1}
              ) AS p`
            const passages = counted?.passages ?? 0
            return { jobIds: rows.map((r) => r.job_id), more: passages > atMost.passages, passages }
          },
          Effect.orDie
        )

        return SearchBackend.of({
          vectorSearch: !pgvector ? "exact" : indexKind === "half" ? "hnsw_half" : indexKind === "bit" ? "hnsw_bit" : "hnsw",
          replaceJob,
          removeJob,
          candidates,
          languageJobs
        })
      })
    )
}
