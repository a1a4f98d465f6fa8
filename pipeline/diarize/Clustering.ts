/**
 * Agglomerative clustering of L2-normalised embeddings, average linkage on cosine similarity:
 * two clusters merge while the mean cosine similarity over all their cross pairs is at least
 * `threshold` (pure, no model inside).
 *
 * The full dendrogram is built with the nearest-neighbour chain algorithm (exact for average
 * linkage, which is reducible; O(n²) time, one n×n float32 matrix), and cut at `threshold`:
 * average linkage has no inversions, so the cut applies exactly the merges whose similarity is
 * at least `threshold`, as the greedy algorithm would.
 *
 * Speaker hints (`min`/`max` clusters, from `min_speakers`/`max_speakers`): the cut moves. Each
 * merge applied removes one cluster, and merges apply from the most similar down, so the number of
 * clusters is chosen by how many merges apply: above `max` after the threshold, the next most
 * similar merges apply too (the closest clusters join) until `max` remain; below `min`, the least
 * similar applied merges are undone (the dendrogram is cut further down) until `min` remain —
 * never more clusters than items.
 */
export interface ClusterBounds {
  readonly min?: number | undefined
  readonly max?: number | undefined
}


export const cosine = (a: Float32Array, b: Float32Array): number => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  const c = dot / Math.sqrt(na * nb)
  // A zero or non-finite vector is unlike everything (and keeps the neighbour search total).
  return Number.isFinite(c) ? c : 0
}

/**
 * Cluster index per item (0-based, numbered by each cluster's first item). Items are
 * expected to be L2-normalised (cosine is then a dot product, recomputed exactly anyway).
 */
export const averageLinkage = (items: ReadonlyArray<Float32Array>, threshold: number, bounds: ClusterBounds = {}): Array<number> => {
  const n = items.length
  if (n === 0) return []
  const sim = new Float32Array(n * n)
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const s = cosine(items[i]!, items[j]!)
      sim[i * n + j] = s
      sim[j * n + i] = s
    }
  }
  const size = new Array<number>(n).fill(1)
  const active = new Array<boolean>(n).fill(true)
  // The dendrogram: each merge joins the clusters represented by items a and b at similarity sim.
  const merges: Array<{ readonly a: number; readonly b: number; readonly sim: number }> = []
  const chain: Array<number> = []
  let remaining = n
  while (remaining > 1) {
    if (chain.length === 0) chain.push(active.indexOf(true))
    const a = chain[chain.length - 1]!
    const previous = chain.length >= 2 ? chain[chain.length - 2]! : -1
    // Nearest active neighbour of a; ties go to the previous chain element so the chain ends.
    let best = previous
    let bestSim = previous >= 0 ? sim[a * n + previous]! : -Infinity
    for (let x = 0; x < n; x++) {
      if (!active[x] || x === a) continue
      const s = sim[a * n + x]!
      if (s > bestSim) {
        bestSim = s
        best = x
      }
    }
    if (best !== previous) {
      chain.push(best)
      continue
    }
    chain.length -= 2
    const b = previous
    merges.push({ a, b, sim: bestSim })
    // Lance–Williams update for average linkage; the merged cluster keeps index a.
    const na = size[a]!
    const nb = size[b]!
    for (let x = 0; x < n; x++) {
      if (!active[x] || x === a || x === b) continue
      const s = (na * sim[a * n + x]! + nb * sim[b * n + x]!) / (na + nb)
      sim[a * n + x] = s
      sim[x * n + a] = s
    }
    size[a] = na + nb
    active[b] = false
    remaining--
  }
  // Most similar first; on equal similarity in recorded order, so a cluster forms before it merges on.
  const order = merges.map((m, k) => ({ ...m, k })).sort((x, y) => y.sim - x.sim || x.k - y.k)
  let applied = order.filter((m) => m.sim >= threshold).length
  const max = bounds.max === undefined ? n : Math.max(1, Math.min(n, Math.floor(bounds.max)))
  const min = bounds.min === undefined ? 1 : Math.max(1, Math.min(n, Math.floor(bounds.min)))
  if (n - applied > max) applied = n - max
  if (n - applied < min) applied = n - min
  // Union–find over items: each applied merge joins its two representatives.
  const parent = Array.from({ length: n }, (_, i) => i)
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!
      i = parent[i]!
    }
    return i
  }
  for (const m of order.slice(0, applied)) parent[find(m.b)] = find(m.a)
  const ids = new Map<number, number>()
  return items.map((_, i) => {
    const root = find(i)
    const known = ids.get(root)
    if (known !== undefined) return known
    ids.set(root, ids.size)
    return ids.size - 1
  })
}
