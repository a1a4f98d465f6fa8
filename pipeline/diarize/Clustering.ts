/**
 * Agglomerative clustering of L2-normalised embeddings, average linkage on cosine similarity,
 * with no number of clusters given: two clusters merge while the mean cosine similarity over
 * all their cross pairs is at least `threshold` (pure, no model inside).
 *
 * The full dendrogram is built with the nearest-neighbour chain algorithm (exact for average
 * linkage, which is reducible; O(n²) time, one n×n float32 matrix), and cut at `threshold`:
 * average linkage has no inversions, so the cut applies exactly the merges whose similarity is
 * at least `threshold`, as the greedy algorithm would.
 */

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
export const averageLinkage = (items: ReadonlyArray<Float32Array>, threshold: number): Array<number> => {
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
  // Union–find over items: a merge above the threshold joins its two representatives.
  const parent = Array.from({ length: n }, (_, i) => i)
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!
      i = parent[i]!
    }
    return i
  }
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
    if (bestSim >= threshold) parent[find(b)] = find(a)
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
  const ids = new Map<number, number>()
  return items.map((_, i) => {
    const root = find(i)
    const known = ids.get(root)
    if (known !== undefined) return known
    ids.set(root, ids.size)
    return ids.size - 1
  })
}
