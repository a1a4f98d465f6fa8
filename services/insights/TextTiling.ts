/**
 * TextTiling (Hearst 1997) over sentence embeddings instead of word counts.
 *
 * At each gap between sentences, the cosine between the centroid of the `window` sentences
 * before and the `window` sentences after measures cohesion (smoothed by a 3-point moving
 * average once there are more than 12 gaps). A gap's depth is how far its cohesion lies below
 * the nearest peak on each side (climbing while the curve rises). Gaps at local minima deeper
 * than `mean − std / 2` of all depths are boundary candidates (Hearst's liberal cutoff); the
 * deepest are kept first, as long as every chapter keeps at least `minSentences` sentences and
 * `minWords` words, up to `maxChapters` chapters.
 */
import { centroid, dot } from "./Vectors.ts"

export interface TilingOptions {
  readonly window: number
  readonly minSentences: number
  readonly minWords: number
  readonly maxChapters: number
}

/** Cohesion at gap g (between sentence g − 1 and g), for g = 1 … n − 1. */
export const gapCohesion = (vectors: ReadonlyArray<Float32Array>, window: number): Array<number> => {
  const scores: Array<number> = []
  for (let g = 1; g < vectors.length; g++) {
    const left = centroid(vectors.slice(Math.max(0, g - window), g))
    const right = centroid(vectors.slice(g, Math.min(vectors.length, g + window)))
    scores.push(dot(left, right))
  }
  if (scores.length <= 12) return scores
  return scores.map((_, i) => {
    const a = scores[Math.max(0, i - 1)]!
    const c = scores[Math.min(scores.length - 1, i + 1)]!
    return (a + scores[i]! + c) / 3
  })
}

export const depthScores = (cohesion: ReadonlyArray<number>): Array<number> =>
  cohesion.map((s, i) => {
    let left = s
    for (let j = i - 1; j >= 0 && cohesion[j]! >= left; j--) left = cohesion[j]!
    let right = s
    for (let j = i + 1; j < cohesion.length && cohesion[j]! >= right; j++) right = cohesion[j]!
    return left - s + (right - s)
  })

/** Indices of the sentences that open a chapter, ascending, always starting with 0. */
export const textTiling = (
  vectors: ReadonlyArray<Float32Array>,
  wordCounts: ReadonlyArray<number>,
  options: TilingOptions
): Array<number> => {
  const n = vectors.length
  if (n < 2 * options.minSentences || options.maxChapters <= 1) return n === 0 ? [] : [0]
  const depth = depthScores(gapCohesion(vectors, options.window))
  const mean = depth.reduce((a, b) => a + b, 0) / depth.length
  const std = Math.sqrt(depth.reduce((a, b) => a + (b - mean) ** 2, 0) / depth.length)
  const cutoff = mean - std / 2
  const candidates = depth
    .map((d, i) => ({ gap: i + 1, depth: d }))
    .filter(({ depth: d, gap }) => {
      const i = gap - 1
      // A peak of depth is a valley of cohesion.
      const isPeak = (i === 0 || depth[i - 1]! <= d) && (i === depth.length - 1 || depth[i + 1]! <= d)
      return d > 0 && d > cutoff && isPeak
    })
    .sort((a, b) => b.depth - a.depth)

  const prefixWords = [0]
  for (const w of wordCounts) prefixWords.push(prefixWords[prefixWords.length - 1]! + w)
  const fits = (starts: ReadonlyArray<number>) => {
    const sorted = [...starts].sort((a, b) => a - b)
    for (let k = 0; k < sorted.length; k++) {
      const from = sorted[k]!
      const to = sorted[k + 1] ?? n
      if (to - from < options.minSentences) return false
      if (prefixWords[to]! - prefixWords[from]! < options.minWords) return false
    }
    return true
  }
  const starts = [0]
  for (const { gap } of candidates) {
    if (starts.length >= options.maxChapters) break
    if (fits([...starts, gap])) starts.push(gap)
  }
  return starts.sort((a, b) => a - b)
}
