/**
 * On a Postgres server with pgvector, the passages' HNSW index rebuilt over the embeddings at
 * half precision (`halfvec`, pgvector ≥ 0.7): half the size and faster to walk. PGlite gets its
 * own in 0025 (its WebAssembly build is slower at half precision), and the exact-scan layout has
 * no index. Measurements and the rule: search/HnswIndex.ts. The column
 * stays `vector(384)`.
 */
import { Effect } from "effect"
import { embeddingLayout, indexKindHere, rebuildAtMigration } from "../../../search/PgvectorLayout.ts"

export default Effect.gen(function*() {
  if ((yield* embeddingLayout).column !== "vector" || (yield* indexKindHere) !== "half") return
  yield* rebuildAtMigration("half")
})
