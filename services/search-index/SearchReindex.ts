/**
 * Re-indexing the whole library (`verbatim admin search reindex`): every account job that is
 * done and not deleted is indexed again from its current transcript, oldest first, one at a
 * time (the same reconciliation as the `index` task). For a new backend, a changed embedding
 * model, pgvector installed after the fact, or index tasks that were given up.
 *
 * The search layer (model, backend) is built only when a re-index runs, so other admin
 * commands neither load MiniLM nor need a Meilisearch server.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { adoptPgvector } from "../../search/PgvectorLayout.ts"
import { SearchBackend } from "../../search/SearchBackend.ts"
import type { SearchIndex } from "../../search/SearchIndex.ts"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { JobStore } from "../jobs/JobStore.ts"
import { TranscriptStore } from "../jobs/TranscriptStore.ts"
import { syncJob } from "./IndexTask.ts"

export interface ReindexSummary {
  readonly jobs: number
  readonly passages: number
  readonly seconds: number
  /** How the backend searches vectors now (`SearchBackend.vectorSearch`). */
  readonly vectorSearch: SearchBackend["Service"]["vectorSearch"]
}

export class SearchReindex extends Context.Service<SearchReindex, {
  /** Re-indexes every indexable job; `onProgress(done, total)` after each one. */
  run(onProgress: (done: number, total: number) => Effect.Effect<void>): Effect.Effect<ReindexSummary, unknown>
}>()("verbatim/search-index/SearchReindex") {
  /** Needs `SqlClient`, `JobStore`, `TranscriptStore` and what `search` needs. */
  static readonly layer = <E, R>(search: Layer.Layer<SearchIndex | SearchBackend, E, R>) =>
    Layer.effect(
      SearchReindex,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const context = yield* Effect.context<JobStore | TranscriptStore | R>()

        const run = Effect.fn("SearchReindex.run")(function*(onProgress: (done: number, total: number) => Effect.Effect<void>) {
          const started = yield* Clock.currentTimeMillis
          const rows = yield* sql<{ id: JobId }>`SELECT id FROM jobs WHERE status = 'done' AND account_id IS NOT NULL
            AND deleted_at IS NULL ORDER BY created_at`.pipe(Effect.orDie)
          // pgvector installed after the fact: the table takes its layout first (dropping the
          // passages every job below gets again), so the backend built next walks HNSW.
          yield* adoptPgvector.pipe(Effect.provideService(SqlClient.SqlClient, sql))
          const index = yield* Layer.build(search)
          let passages = 0
          yield* onProgress(0, rows.length)
          for (const [i, row] of rows.entries()) {
            passages += yield* syncJob(row.id).pipe(Effect.provideContext(index))
            yield* onProgress(i + 1, rows.length)
          }
          return {
            jobs: rows.length,
            passages,
            seconds: ((yield* Clock.currentTimeMillis) - started) / 1000,
            vectorSearch: Context.get(index, SearchBackend).vectorSearch
          }
        }, (effect) => Effect.scoped(Effect.provideContext(effect, context)))

        return SearchReindex.of({ run })
      })
    )
}
