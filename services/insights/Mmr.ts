/**
 * Maximal marginal relevance: picks up to `k` items, each time the one with the best
 * `lambda · relevance − (1 − lambda) · (highest similarity to an item already picked)`.
 * Relevance should be on a 0..1 scale, like the cosine similarities it is traded against.
 * Returns indices in the order they were picked.
 */
export const mmr = (
  relevance: ReadonlyArray<number>,
  similarity: (i: number, j: number) => number,
  k: number,
  lambda = 0.7
): Array<number> => {
  const picked: Array<number> = []
  const maxSim = new Float64Array(relevance.length).fill(-Infinity)
  const left = new Set(relevance.map((_, i) => i))
  while (picked.length < k && left.size > 0) {
    let best = -1
    let bestScore = -Infinity
    for (const i of left) {
      const redundancy = picked.length === 0 ? 0 : maxSim[i]!
      const score = lambda * relevance[i]! - (1 - lambda) * redundancy
      if (score > bestScore) {
        bestScore = score
        best = i
      }
    }
    picked.push(best)
    left.delete(best)
    for (const i of left) maxSim[i] = Math.max(maxSim[i]!, similarity(i, best))
  }
  return picked
}
