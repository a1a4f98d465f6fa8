/**
 * On PGlite, the passages' HNSW index rebuilt over the embeddings' sign bits
 * (`binary_quantize`, pgvector ≥ 0.7), walked by Hamming distance for 800 rows that the search
 * then orders by their full-precision cosine: a sixth of the full-precision index's size, built
 * in under half the time, which is what lets the embedded database hold a library of 1M
 * passages. A native server keeps 0024's half-precision index; the exact-scan layout has no
 * index. Measurements and the rule: search/HnswIndex.ts. The column stays `vector(384)`.
 */
import { Effect } from "effect"
import { embeddingLayout, indexKindHere, rebuildAtMigration } from "../../../search/PgvectorLayout.ts"

export default Effect.gen(function*() {
  if ((yield* embeddingLayout).column !== "vector" || (yield* indexKindHere) !== "bit") return
  yield* rebuildAtMigration("bit")
})
