/**
 * Where passages are stored and first ranked: Postgres (pgvector + tsvector, fused by
 * reciprocal rank) or Meilisearch (hybrid search). `SearchIndex` owns everything above:
 * cutting, embedding, narrowing a passage to its best moment, merging, highlighting.
 */
import { Context, type Effect } from "effect"
import type { Passage, PassageKind } from "./Passages.ts"

/** Facts about the job stored with each of its passages. */
export interface JobMeta {
  readonly filename: string | null
  /** The transcript's language (ISO 639-1), chooses the full-text configuration. */
  readonly language: string | null
  /** The job's creation time; `since`/`until` filter on it. */
  readonly created_at: Date
}

export interface PassageDocument extends Passage {
  readonly embedding: Float32Array
}

export interface StoredPassage extends Passage {
  readonly jobId: string
  readonly filename: string | null
}

/** The columns/fields both backends store for a passage, besides its id, time and vector. */
export interface PassageRecord extends Passage {
  readonly account_id: string
  readonly job_id: string
  readonly filename: string | null
  readonly language: string | null
}

export const passageRecord = (accountId: string, jobId: string, meta: JobMeta, passage: Passage): PassageRecord => ({
  account_id: accountId,
  job_id: jobId,
  kind: passage.kind,
  start: passage.start,
  end: passage.end,
  speaker: passage.speaker,
  text: passage.text,
  moments: passage.moments,
  filename: meta.filename,
  language: meta.language
})

export interface CandidateQuery {
  readonly accountId: string
  readonly q: string
  /** The query's embedding (same model, same one-text-per-run rule as the passages). */
  readonly vector: Float32Array
  readonly limit: number
  readonly kind?: PassageKind | undefined
  readonly jobIds?: ReadonlyArray<string> | undefined
  /** Jobs to leave out (the caller's locked ones), so they take no place among the candidates. */
  readonly excludeJobIds?: ReadonlyArray<string> | undefined
  readonly language?: string | undefined
  /**
   * Only passages lying inside one of these stretches of talk (a job's [start, end], in
   * seconds). A narrowing a backend may skip (Meilisearch does: start/end are not
   * filterable there): the caller looks only at passages inside them anyway. Their jobs must
   * be among `jobIds` when both are given (Postgres then filters on these alone).
   */
  readonly within?: ReadonlyArray<{ readonly jobId: string; readonly start: number; readonly end: number }> | undefined
  readonly since?: Date | undefined
  readonly until?: Date | undefined
}

export interface Candidate {
  readonly passage: StoredPassage
  /** Higher is better; only the order within one answer is meaningful. */
  readonly score: number
  /**
   * The cosine of the query's and this passage's stored embeddings, when the backend
   * computes it (Postgres): a hit whose text is this passage's needs no embedding at query
   * time for its relevance (the same text alone gives the same vector).
   */
  readonly cosine?: number | undefined
}

export interface LanguageBound {
  readonly jobs: number
  readonly passages: number
}

export interface LanguageJobs {
  readonly jobIds: ReadonlyArray<string>
  readonly more: boolean
  /** Their passages, counted up to `atMost.passages` + 1 (which is what it says whenever `more`). */
  readonly passages: number
}

export class SearchBackend extends Context.Service<SearchBackend, {
  /**
   * How the vector list is searched, as `verbatim admin search reindex` reports it: `hnsw_half`
   * (a Postgres server), `hnsw_bit` (PGlite), `hnsw` (full precision), `exact` (a server without
   * pgvector: every account row scanned), `meilisearch`.
   */
  readonly vectorSearch: "hnsw_half" | "hnsw_bit" | "hnsw" | "exact" | "meilisearch"
  /** Replaces every passage of the job (a re-index after a correction is the same call). */
  replaceJob(accountId: string, jobId: string, meta: JobMeta, documents: ReadonlyArray<PassageDocument>): Effect.Effect<void>
  removeJob(jobId: string): Effect.Effect<void>
  /** The account's passages best matching the query, best first, never another account's. */
  candidates(query: CandidateQuery): Effect.Effect<ReadonlyArray<Candidate>>
  /**
   * The account's jobs with passages in this language (ISO 639-1), when they are at most
   * `atMost.jobs` jobs holding at most `atMost.passages` passages between them (few enough to be
   * searched by name); otherwise at most `atMost.jobs` of them and `more` (a backend that does not
   * list them says `more` with none). A question is searched in translation only where there is
   * something in the other language.
   */
  languageJobs(accountId: string, language: string, atMost: LanguageBound): Effect.Effect<LanguageJobs>
}>()("verbatim/search/SearchBackend") {}
