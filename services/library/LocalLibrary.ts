/**
 * The embeddable library's local search: index transcripts under ids of the caller's
 * choosing and ask natural-language questions over them, with the server's own library
 * search (`SearchIndex`: passages, MiniLM embeddings, full text, moments) on a database the
 * library owns (embedded PGlite under `dataDir`, see layers/Library.ts).
 *
 * The search tables key jobs by UUID and accounts by UUID: every local transcript belongs to
 * one fixed account, and a caller's id becomes a name-based UUID (SHA-1 over a fixed
 * namespace, RFC 9562 version 5), so the same id always lands on the same rows. The caller's
 * id itself is kept in `local_library_items` (created here, idempotently) to answer hits with
 * it: a hit's `job_id` is the id given to `index`.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { type InvalidSearchQuery, type SearchHit, SearchIndex } from "../../search/SearchIndex.ts"

/** The one account every local transcript belongs to. */
export const LOCAL_ACCOUNT_ID = "00000000-0000-4000-8000-00000000f1e5"
const ID_NAMESPACE = Buffer.from("6f1c2a4e9b3d4c7a8e5f0a1b2c3d4e5f", "hex")

/** The UUID a caller's id is stored under: version 5 (SHA-1, name-based) in ID_NAMESPACE. */
export const localJobId = (id: string): string => {
  const bytes = createHash("sha1").update(ID_NAMESPACE).update(id, "utf8").digest().subarray(0, 16)
  bytes[6] = (bytes[6]! & 0x0f) | 0x50
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

export interface IndexMeta {
  /** Shown in hits as `filename`. */
  readonly filename?: string | undefined
  /** ISO 639-1; chooses the full-text stemming. Default: the transcript's language. */
  readonly language?: string | undefined
  readonly createdAt?: Date | undefined
}

export interface LocalSearchOptions {
  /** 1..50, default 10. */
  readonly limit?: number | undefined
  /** Only these transcripts (the ids given to `index`). */
  readonly ids?: ReadonlyArray<string> | undefined
  /** Only transcripts in this language (ISO 639-1). */
  readonly language?: string | undefined
}

/** As the server's library search hit; `job_id` is the caller's id given to `index`. */
export type LocalSearchHit = SearchHit

export class LocalLibrary extends Context.Service<LocalLibrary, {
  /** Stores the transcript's passages under `id`, replacing what `id` had. Returns how many. */
  index(id: string, transcript: Transcript, meta?: IndexMeta): Effect.Effect<number>
  /** Forgets `id` (nothing happens for an unknown id). */
  remove(id: string): Effect.Effect<void>
  /** Best moments first. An empty or over-long question, or a limit out of 1..50, fails. */
  search(q: string, options?: LocalSearchOptions): Effect.Effect<ReadonlyArray<LocalSearchHit>, InvalidSearchQuery>
}>()("verbatim/library/LocalLibrary") {
  /** Needs `SearchIndex` and the `SqlClient` of the migrated database its backend uses. */
  static readonly layer = Layer.effect(
    LocalLibrary,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const searchIndex = yield* SearchIndex
      yield* sql`CREATE TABLE IF NOT EXISTS local_library_items (
        job_id uuid PRIMARY KEY,
        id text NOT NULL UNIQUE
      )`.pipe(Effect.orDie)

      const index = Effect.fn("LocalLibrary.index")(function*(id: string, transcript: Transcript, meta: IndexMeta = {}) {
        const jobId = localJobId(id)
        const passages = yield* searchIndex.indexJob(LOCAL_ACCOUNT_ID, jobId, {
          filename: meta.filename ?? null,
          language: meta.language ?? transcript.language,
          created_at: meta.createdAt ?? new Date()
        }, transcript)
        yield* sql`INSERT INTO local_library_items (job_id, id) VALUES (${jobId}, ${id})
          ON CONFLICT (job_id) DO NOTHING`.pipe(Effect.orDie)
        return passages
      })

      const remove = Effect.fn("LocalLibrary.remove")(function*(id: string) {
        const jobId = localJobId(id)
        yield* searchIndex.removeJob(jobId)
        yield* sql`DELETE FROM local_library_items WHERE job_id = ${jobId}`.pipe(Effect.orDie)
      })

      const search = Effect.fn("LocalLibrary.search")(function*(q: string, options: LocalSearchOptions = {}) {
        const hits = yield* searchIndex.search({
          accountId: LOCAL_ACCOUNT_ID,
          q,
          limit: options.limit,
          jobIds: options.ids?.map(localJobId),
          language: options.language
        })
        if (hits.length === 0) return hits
        const rows = yield* sql<{ job_id: string; id: string }>`SELECT job_id, id FROM local_library_items
          WHERE job_id IN ${sql.in(Array.from(new Set(hits.map((h) => h.job_id))))}`.pipe(Effect.orDie)
        const ids = new Map(rows.map((r) => [r.job_id, r.id]))
        return hits.map((hit) => ({ ...hit, job_id: ids.get(hit.job_id) ?? hit.job_id }))
      })

      return LocalLibrary.of({ index, remove, search })
    })
  )
}
