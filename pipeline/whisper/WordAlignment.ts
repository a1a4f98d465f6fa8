/**
 * Word timings from cross-attention (the OpenAI / transformers.js recipe): the alignment
 * heads' attention over encoder frames for each text token is normalised per head over
 * the token axis, median-filtered along time (width 7), averaged over heads and aligned
 * to frames by DTW; a token starts at the first frame the path reaches its row. One
 * encoder frame is 0.02 s.
 */

const FRAME_SECONDS = 0.02
const MEDIAN_WIDTH = 7

/** Median filter along one row with reflect padding (OpenAI pads the same way). */
const medianFilterRow = (src: Float32Array, dst: Float32Array, width: number): void => {
  const n = src.length
  const half = width >> 1
  const win = new Float64Array(width)
  const at = (i: number) => {
    let j = i
    if (n === 1) return src[0]!
    while (j < 0 || j >= n) j = j < 0 ? -j : 2 * (n - 1) - j
    return src[j]!
  }
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < width; k++) {
      const v = at(i - half + k)
      let p = k - 1
      while (p >= 0 && win[p]! > v) {
        win[p + 1] = win[p]!
        p--
      }
      win[p + 1] = v
    }
    dst[i] = win[half]!
  }
}

/**
 * DTW over a cost matrix (rows = tokens, cols = frames, lower is better); returns for
 * each row the first column the optimal path visits.
 */
const dtwRowStarts = (cost: Float64Array, rows: number, cols: number): Int32Array => {
  const W = cols + 1
  const acc = new Float64Array((rows + 1) * W).fill(Infinity)
  const trace = new Int8Array((rows + 1) * W)
  acc[0] = 0
  for (let j = 1; j <= cols; j++) {
    for (let i = 1; i <= rows; i++) {
      const c0 = acc[(i - 1) * W + j - 1]!
      const c1 = acc[(i - 1) * W + j]!
      const c2 = acc[i * W + j - 1]!
      let c: number
      let t: number
      if (c0 < c1 && c0 < c2) {
        c = c0
        t = 0
      } else if (c1 < c0 && c1 < c2) {
        c = c1
        t = 1
      } else {
        c = c2
        t = 2
      }
      acc[i * W + j] = cost[(i - 1) * cols + j - 1]! + c
      trace[i * W + j] = t
    }
  }
  for (let j = 0; j <= cols; j++) trace[j] = 2
  for (let i = 0; i <= rows; i++) trace[i * W] = 1
  const starts = new Int32Array(rows).fill(-1)
  let i = rows
  let j = cols
  while (i > 0 || j > 0) {
    if (i > 0 && j > 0) starts[i - 1] = j - 1 // overwritten while walking back → first column
    const t = trace[i * W + j]!
    if (t === 0) {
      i--
      j--
    } else if (t === 1) i--
    else j--
  }
  // Rows the path crossed vertically only: inherit the next row's start.
  for (let r = rows - 1; r >= 0; r--) if (starts[r]! < 0) starts[r] = r + 1 < rows ? starts[r + 1]! : cols - 1
  return starts
}

/**
 * Start time (s, relative to the pass audio) of each row: rows are the alignment rows of
 * the text tokens plus one terminating row. `alignment[r]` is [nHeads * 1500].
 */
export const tokenStartTimes = (alignment: ReadonlyArray<Float32Array>, nHeads: number, frames: number): Array<number> => {
  const T = alignment.length
  const F = Math.max(1, Math.min(1500, frames))
  if (T === 0) return []
  const matrix = new Float64Array(T * F)
  const col = new Float32Array(F)
  const filtered = new Float32Array(F)
  const norm = new Float32Array(T * F)
  for (let h = 0; h < nHeads; h++) {
    // Normalise this head over the token axis (per frame: zero mean, unit variance).
    for (let f = 0; f < F; f++) {
      let mean = 0
      for (let t = 0; t < T; t++) mean += alignment[t]![h * 1500 + f]!
      mean /= T
      let v = 0
      for (let t = 0; t < T; t++) {
        const d = alignment[t]![h * 1500 + f]! - mean
        v += d * d
      }
      const std = Math.sqrt(v / T) || 1e-10
      for (let t = 0; t < T; t++) norm[t * F + f] = (alignment[t]![h * 1500 + f]! - mean) / std
    }
    for (let t = 0; t < T; t++) {
      col.set(norm.subarray(t * F, (t + 1) * F))
      medianFilterRow(col, filtered, Math.min(MEDIAN_WIDTH, F % 2 === 1 ? F : F - 1 || 1))
      for (let f = 0; f < F; f++) matrix[t * F + f] = matrix[t * F + f]! - filtered[f]! / nHeads
    }
  }
  const starts = dtwRowStarts(matrix, T, F)
  return Array.from(starts, (s) => s * FRAME_SECONDS)
}

export interface WordSpan {
  readonly text: string
  /** Token index range [from, to) into the pass text tokens. */
  readonly from: number
  readonly to: number
}

const PREPEND = "\"'“¿([{-"
const APPEND = "\"'.。,，!！?？:：”)]}、"
const PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

/**
 * Groups text tokens into words: a word starts at a token whose text begins with a space
 * or is punctuation; tokens whose bytes are not yet valid UTF-8 stay with the next one.
 * Leading quotes/brackets join the next word, trailing punctuation the previous one.
 */
export const groupWords = (tokens: ReadonlyArray<number>, decode: (ids: ReadonlyArray<number>) => string): Array<WordSpan> => {
  const subwords: Array<WordSpan> = []
  let start = 0
  for (let i = 0; i < tokens.length; i++) {
    const text = decode(tokens.slice(start, i + 1))
    if (!text.includes("\uFFFD") || i === tokens.length - 1) {
      subwords.push({ text, from: start, to: i + 1 })
      start = i + 1
    }
  }
  const words: Array<{ text: string; from: number; to: number }> = []
  for (const sw of subwords) {
    const stripped = sw.text.trim()
    const isPunct = stripped.length > 0 && [...stripped].every((c) => PUNCT.includes(c))
    if (words.length === 0 || sw.text.startsWith(" ") || isPunct) words.push({ ...sw })
    else {
      const w = words[words.length - 1]!
      w.text += sw.text
      w.to = sw.to
    }
  }
  // Prepended punctuation joins the following word.
  for (let i = words.length - 2; i >= 0; i--) {
    const w = words[i]!
    if (w.text.startsWith(" ") && PREPEND.includes(w.text.trim()) && w.text.trim().length > 0) {
      const next = words[i + 1]!
      next.text = w.text + next.text
      next.from = w.from
      words.splice(i, 1)
    }
  }
  // Appended punctuation joins the previous word.
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!
    if (!w.text.startsWith(" ") && w.text.length > 0 && [...w.text].every((c) => APPEND.includes(c))) {
      const prev = words[i - 1]!
      prev.text += w.text
      prev.to = w.to
      words.splice(i, 1)
      i--
    }
  }
  return words.filter((w) => w.text.trim().length > 0)
}

export interface TimedWord {
  start: number
  end: number
  readonly text: string
}

const SENTENCE_END = ".。!！?？"

/**
 * OpenAI's duration heuristics for DTW word timings: the path gives words around a pause
 * the pause's length, so a word longer than twice the median word duration (median capped
 * at 0.7 s) is cut back — a word ending a sentence loses its end, a word starting one (or
 * the first of the list) loses its start. Mutates and returns `words`.
 */
export const tidyWordDurations = (words: Array<TimedWord>): Array<TimedWord> => {
  const durations = words.map((w) => w.end - w.start).filter((d) => d > 0).sort((a, b) => a - b)
  if (durations.length === 0) return words
  const median = Math.min(0.7, durations[Math.floor(durations.length / 2)]!)
  const max = 2 * median
  words.forEach((w, i) => {
    if (w.end - w.start <= max) return
    const endsSentence = SENTENCE_END.includes(w.text.trim().slice(-1))
    const startsSentence = i === 0 || SENTENCE_END.includes(words[i - 1]!.text.trim().slice(-1))
    if (endsSentence) w.end = w.start + max
    else if (startsSentence) w.start = w.end - max
  })
  return words
}
