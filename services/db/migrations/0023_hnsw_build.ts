/**
 * The passages' HNSW index rebuilt with `ef_construction` 128 (pgvector's default is 64), on a
 * server or PGlite with pgvector; nothing to do on the exact-scan layout.
 *
 * Measured (2026-11-27, bench/search.ts --corpus, 100k passages of real MiniLM vectors on PGlite,
 * ef_search 400): with the default build, HNSW never reached the one small topic of the library
 * (a coastal-erosion interview among 100k sentences of software manuals): "How many metres of
 * cliff loses the coast every year?" got unrelated hits on the fast path while the exact search
 * found the cliff moment at cosine 0.827, and recall@10 of the whole search against the exact one
 * was 0.886 (0.842 of the hits at the default min_relevance). Built with 128 the same search
 * found it: recall@10 0.981 (1.000), p50 27.8 / p99 57.7 ms against 24–25 / 44 ms. The build
 * takes longer: 100k passages 256 s on PGlite against 145 s, which an upgrade pays once here.
 *
 * Since 0024 (a native server, half precision) and 0025 (PGlite, sign bits) build the index again
 * straight after, this one builds nothing any more: on an upgrade from ≤ 0022 it cost ~50 s
 * (server) to ~190 s (PGlite) per 100k passages for an index dropped at once. The build options
 * live on in search/HnswIndex.ts.
 */
import { Effect } from "effect"

export default Effect.void
