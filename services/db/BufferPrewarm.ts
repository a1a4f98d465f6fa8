/**
 * Reads the embedded database's relations into PGlite's buffer cache after start, in the
 * background. The database process sizes the cache to the data on disk
 * (embeddedPostgresWorker.ts); without this, each page still came from the WASM file system
 * the first time a query needed it, and a question's first asking paid for hundreds of them (at
 * 100k search passages 300–1,800 pages a statement: the search's p99 was first askings, 166–360
 * ms against 88–133 ms for repeats). PGlite ships no pg_prewarm; pageinspect's `get_raw_page`
 * reads a page through the buffer manager's normal strategy, so it stays cached (a sequential
 * scan of a relation over a quarter of the cache would go through a small ring instead).
 *
 * Only when the cache was raised above Postgres' default 128 MB (a small database needs no
 * help: its pages fit and are read once each) and only by the process that owns the database.
 * Relations are read smallest first while they fit in 90% of the cache; a relation that does
 * not fit whole is left to be read on demand (at 1M passages the heap and HNSW index exceed the
 * 1 GB cap). Statements of 128 pages keep a query arriving meanwhile waiting a few
 * milliseconds at most on the pool of one connection.
 */
import { Context, Deferred, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { DEFAULT_BUFFERS, prewarmPlan } from "./bufferCache.ts"
import { EmbeddedPostgres } from "./EmbeddedPostgres.ts"

const PAGES_PER_STATEMENT = 128

/** Reads what fits into the cache; nothing unless the cache was raised and this process owns it. */
const prewarm = Effect.fnUntraced(function*(sql: SqlClient.SqlClient, owner: boolean) {
  const [setting] = yield* sql<{ pages: number }>`SELECT setting::int AS pages FROM pg_settings
    WHERE name = 'shared_buffers'`
  const buffers = setting?.pages ?? DEFAULT_BUFFERS
  if (!owner || buffers <= DEFAULT_BUFFERS) return
  const started = performance.now()
  yield* sql`CREATE EXTENSION IF NOT EXISTS pageinspect`
  const relations = yield* sql<{ rel: string; pages: number }>`SELECT oid::regclass::text AS rel,
      (pg_relation_size(oid) / 8192)::int AS pages
    FROM pg_class WHERE relkind IN ('r', 'i', 't', 'm') AND relpersistence = 'p' AND pg_relation_size(oid) > 0`
  let read = 0
  for (const relation of prewarmPlan(relations, buffers)) {
    // A relation dropped since the listing is skipped, not the rest.
    yield* Effect.ignore(Effect.gen(function*() {
      for (let from = 0; from < relation.pages; from += PAGES_PER_STATEMENT) {
        const to = Math.min(relation.pages, from + PAGES_PER_STATEMENT) - 1
        yield* sql`SELECT count(get_raw_page(${relation.rel}, g)) FROM generate_series(${from}::int8, ${to}::int8) AS g`
      }
      read += relation.pages
    }))
  }
  yield* Effect.logInfo("embedded database cache prewarmed").pipe(Effect.annotateLogs({
    pages: read,
    cache_pages: buffers,
    ms: Math.round(performance.now() - started)
  }))
})

/** Whether the start-up prewarm has ended (read what fits, failed, or had nothing to do). */
export class BufferPrewarm extends Context.Service<BufferPrewarm, { readonly done: Effect.Effect<void> }>()(
  "verbatim/db/BufferPrewarm"
) {
  /** Needs the embedded database's `SqlClient`; the prewarm runs in the layer's scope. */
  static readonly layer = Layer.effect(BufferPrewarm)(Effect.gen(function*() {
    const done = yield* Deferred.make<void>()
    yield* prewarm(yield* SqlClient.SqlClient, (yield* EmbeddedPostgres).owner).pipe(
      Effect.catchCause((cause) => Effect.logWarning("embedded database cache prewarm failed", cause)),
      Effect.ensuring(Deferred.succeed(done, undefined)),
      Effect.forkScoped
    )
    return BufferPrewarm.of({ done: Deferred.await(done) })
  }))

  /** A server database: its own cache, nothing to do here. */
  static readonly none = Layer.succeed(BufferPrewarm, BufferPrewarm.of({ done: Effect.void }))
}
