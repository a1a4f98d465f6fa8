/**
 * Small vector helpers over sentence embeddings. Embeddings are L2-normalised, so their dot
 * product is their cosine; a mean of embeddings is re-normalised before it is compared.
 */

export const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) s += a[i]! * b[i]!
  return s
}

/** Cosine of two vectors of any norm (0 when either is zero). */
export const cosine = (a: Float32Array, b: Float32Array): number => {
  const na = Math.sqrt(dot(a, a))
  const nb = Math.sqrt(dot(b, b))
  return na === 0 || nb === 0 ? 0 : dot(a, b) / (na * nb)
}

/** The L2-normalised mean of `vectors` (optionally weighted); a zero vector when empty. */
export const centroid = (vectors: ReadonlyArray<Float32Array>, weights?: ReadonlyArray<number>): Float32Array => {
  const dim = vectors[0]?.length ?? 0
  const out = new Float32Array(dim)
  vectors.forEach((v, k) => {
    const w = weights?.[k] ?? 1
    for (let i = 0; i < dim; i++) out[i]! += w * v[i]!
  })
  const norm = Math.sqrt(dot(out, out))
  if (norm > 0) for (let i = 0; i < dim; i++) out[i]! /= norm
  return out
}

/** Rescales scores to 0..1 (all equal → all 1). */
export const minMax = (scores: ReadonlyArray<number>): Array<number> => {
  const lo = Math.min(...scores)
  const hi = Math.max(...scores)
  return scores.map((s) => (hi - lo < 1e-12 ? 1 : (s - lo) / (hi - lo)))
}
