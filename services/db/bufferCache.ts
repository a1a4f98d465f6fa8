/**
 * How big the embedded database's buffer cache is, and what is read into it at start
 * (embeddedPostgresWorker.ts sets the size, BufferPrewarm.ts reads). Plain functions: the
 * database process imports this and nothing of Effect.
 */

const MB = 1024 * 1024

/** Postgres' default `shared_buffers`, in 8 kB pages (128 MB). */
export const DEFAULT_BUFFERS = 16_384

/**
 * PGlite's `shared_buffers` in MB, sized to the relations on disk (`base/`, `dataBytes`) plus a
 * quarter for growth, at least Postgres' 128 MB and at most 1 GB or an eighth of the machine's
 * memory. PGlite reads a page missing from it through the WASM file system (tens of µs each,
 * hundreds when the OS has not cached the file): at 100k search passages (heap 147 MB, HNSW 195
 * MB, TOAST 88 MB) 128 MB held under a third of what questions read, so each new question read
 * 300–1,800 pages. The cost is resident memory from the start: the process's RSS grows by about
 * the cache's size whether or not pages are read into it (measured: 128 → 600 MB, +486 MB), so
 * a small database keeps the default. 1 GB leaves PGlite's 2 GB of WASM memory room for the rest
 * (an HNSW build asks for up to `maintenance_work_mem`). Set once at start: the cache does not
 * follow the data's growth until the next start.
 */
export const sharedBuffersMb = (dataBytes: number, totalMemoryBytes: number): number => {
  const wanted = Math.ceil((dataBytes * 1.25) / MB / 16) * 16
  return Math.max(128, Math.min(wanted, 1024, Math.floor(totalMemoryBytes / MB / 8)))
}

/**
 * The relations to read into a cache of `buffers` pages, smallest first while they fit whole in
 * 90% of it (the rest stays for what queries read besides); a relation that does not fit ends
 * the list, every later one being at least as big. Nothing when the cache is the default one.
 */
export const prewarmPlan = <R extends { readonly pages: number }>(relations: ReadonlyArray<R>, buffers: number): ReadonlyArray<R> => {
  if (buffers <= DEFAULT_BUFFERS) return []
  const plan: Array<R> = []
  let budget = Math.floor(buffers * 0.9)
  for (const relation of [...relations].sort((a, b) => a.pages - b.pages)) {
    if (relation.pages > budget) break
    budget -= relation.pages
    plan.push(relation)
  }
  return plan
}
