/**
 * The embedded database's buffer cache for a large library (services/db/bufferCache.ts): its
 * size from the data on disk, and which relations the start-up prewarm reads. Figures of the
 * 100k-passage bench library (bench/search.ts --bulk 100000): `base/` 469 MB; heap 18,866
 * pages, HNSW 25,001, TOAST 11,300, GIN 522, (job_id, start) 770.
 */
import { describe, expect, it } from "vitest"
import { DEFAULT_BUFFERS, prewarmPlan, sharedBuffersMb } from "../../services/db/bufferCache.ts"

const MB = 1024 * 1024
const GB = 1024 * MB

describe("embedded buffer cache", () => {
  it("keeps Postgres' 128 MB for a small database", () => {
    expect(sharedBuffersMb(0, 24 * GB)).toBe(128)
    expect(sharedBuffersMb(80 * MB, 24 * GB)).toBe(128)
  })

  it("holds the 100k library with a quarter to spare, in 16 MB steps", () => {
    expect(sharedBuffersMb(469 * MB, 24 * GB)).toBe(592)
  })

  it("stops at 1 GB (PGlite's WASM memory is 2 GB) and at an eighth of the machine's memory", () => {
    expect(sharedBuffersMb(4.4 * GB, 24 * GB)).toBe(1024)
    expect(sharedBuffersMb(469 * MB, 4 * GB)).toBe(512)
    expect(sharedBuffersMb(469 * MB, 512 * MB)).toBe(128)
  })

  const library = [
    { rel: "search_passages_embedding", pages: 25_001 },
    { rel: "search_passages", pages: 18_866 },
    { rel: "pg_toast.pg_toast_16985", pages: 11_300 },
    { rel: "search_passages_job", pages: 770 },
    { rel: "search_passages_tsv", pages: 522 }
  ]

  it("reads nothing into the default cache", () => {
    expect(prewarmPlan(library, DEFAULT_BUFFERS)).toEqual([])
  })

  it("reads the whole 100k library, smallest first, into the cache sized for it", () => {
    expect(prewarmPlan(library, (592 * MB) / 8192).map((r) => r.rel)).toEqual([
      "search_passages_tsv",
      "search_passages_job",
      "pg_toast.pg_toast_16985",
      "search_passages",
      "search_passages_embedding"
    ])
  })

  it("leaves out what does not fit whole in 90% of the cache, and everything bigger", () => {
    // 40,000 pages: 36,000 to fill; tsv, job, TOAST (12,592) fit, the heap would make 31,458,
    // the HNSW index not.
    expect(prewarmPlan(library, 40_000).map((r) => r.rel)).toEqual([
      "search_passages_tsv",
      "search_passages_job",
      "pg_toast.pg_toast_16985",
      "search_passages"
    ])
    expect(prewarmPlan(library, 20_000).map((r) => r.rel)).toEqual(["search_passages_tsv", "search_passages_job", "pg_toast.pg_toast_16985"])
  })
})
