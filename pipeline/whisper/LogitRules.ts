/**
 * Per-step logit processing for Whisper greedy / sampled decoding, in the order HF
 * `generate` and OpenAI's DecodingTask apply it: suppress_tokens, begin_suppress_tokens
 * (first generated position only), then the timestamp rules (OpenAI ApplyTimestampRules /
 * HF WhisperTimeStampLogitsProcessor). Works in place on one row of logits.
 */

export interface LogitRulesConfig {
  readonly eot: number
  readonly noTimestamps: number
  readonly timestampBegin: number
  readonly vocabSize: number
  readonly suppress: ReadonlyArray<number>
  readonly beginSuppress: ReadonlyArray<number>
  /** Index (relative to timestampBegin) of the largest timestamp allowed first (50 → 1.00 s). */
  readonly maxInitialTimestampIndex: number
  readonly withTimestamps: boolean
}

/**
 * Applies the rules to `logits` (one vocabulary row) given the tokens generated so far
 * (prompt excluded).
 */
export const applyLogitRules = (logits: Float32Array, generated: ReadonlyArray<number>, cfg: LogitRulesConfig): void => {
  const V = cfg.vocabSize
  for (const id of cfg.suppress) if (id < V) logits[id] = -Infinity
  const n = generated.length
  if (n === 0) for (const id of cfg.beginSuppress) if (id < V) logits[id] = -Infinity
  if (!cfg.withTimestamps) return

  const tb = cfg.timestampBegin
  logits[cfg.noTimestamps] = -Infinity
  const lastWasTs = n >= 1 && generated[n - 1]! >= tb
  const penultimateWasTs = n < 2 || generated[n - 2]! >= tb
  if (lastWasTs) {
    if (penultimateWasTs) logits.fill(-Infinity, tb, V)
    else logits.fill(-Infinity, 0, cfg.eot)
  }
  let lastTs = -1
  for (let i = n - 1; i >= 0; i--) {
    if (generated[i]! >= tb) {
      lastTs = generated[i]!
      break
    }
  }
  if (lastTs >= 0) {
    // Timestamps never decrease; a repeated one is only allowed to close a pair.
    const limit = lastWasTs && !penultimateWasTs ? lastTs : lastTs + 1
    logits.fill(-Infinity, tb, Math.min(limit, V))
  }
  if (n === 0) {
    logits.fill(-Infinity, 0, tb)
    logits.fill(-Infinity, tb + cfg.maxInitialTimestampIndex + 1, V)
  }

  // Force a timestamp when the total timestamp probability beats every single text token.
  let maxText = -Infinity
  for (let i = 0; i < tb; i++) if (logits[i]! > maxText) maxText = logits[i]!
  let maxTs = -Infinity
  for (let i = tb; i < V; i++) if (logits[i]! > maxTs) maxTs = logits[i]!
  if (maxTs === -Infinity) return
  let tsSum = 0
  for (let i = tb; i < V; i++) tsSum += Math.exp(logits[i]! - maxTs)
  if (Math.log(tsSum) + maxTs > maxText) logits.fill(-Infinity, 0, tb)
}

/** exp(-i / 32) for i = 0 … 40·32: the table `logSumExp` interpolates. */
const LSE_STEP = 32
const LSE_TOP = 40 * LSE_STEP
const LSE_TABLE = Float64Array.from({ length: LSE_TOP + 1 }, (_, i) => Math.exp(-i / LSE_STEP))

/**
 * Log-sum-exp of a logits row (the log-softmax normaliser); `max` must be the row's maximum.
 *
 * Why not Math.exp per element: it ran on every step for every batch row over ~52k logits, a
 * third of them close enough to the maximum to need the exp, and cost 0.65 s of a 10-minute
 * transcription on one thread (profile of tiny.en). Here exp(-z) for z = max − v is a table
 * value at z rounded down to 1/32 times a cubic of the remainder, branch-free: about half the
 * time, relative error of the sum below 1e-8 (terms below e^−40 count as e^−40, at most 2e-13
 * of the sum over the whole row).
 */
export const logSumExp = (logits: Float32Array, max = maxOf(logits)): number => {
  if (max === -Infinity) return max
  let s = 0
  for (let i = 0; i < logits.length; i++) {
    const z = Math.min((max - logits[i]!) * LSE_STEP, LSE_TOP)
    const j = z | 0
    const r = (j - z) / LSE_STEP // in (−1/32, 0]
    s += LSE_TABLE[j]! * (1 + r * (1 + r * (0.5 + r * (1 / 6))))
  }
  return max + Math.log(s)
}

export const maxOf = (logits: Float32Array): number => {
  let max = -Infinity
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!
  return max
}

export const argmax = (logits: Float32Array): number => {
  let best = 0
  let max = -Infinity
  for (let i = 0; i < logits.length; i++) {
    if (logits[i]! > max) {
      max = logits[i]!
      best = i
    }
  }
  return best
}

/** Draws from softmax(logits / temperature) with a caller-supplied uniform RNG. */
export const sample = (logits: Float32Array, temperature: number, random: () => number): number => {
  let max = -Infinity
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!
  let total = 0
  for (let i = 0; i < logits.length; i++) total += Math.exp((logits[i]! - max) / temperature)
  let r = random() * total
  let last = 0
  for (let i = 0; i < logits.length; i++) {
    const p = Math.exp((logits[i]! - max) / temperature)
    if (p === 0) continue
    last = i
    r -= p
    if (r <= 0) return i
  }
  return last
}

/** mulberry32: small, fast, seedable; sampling must be reproducible run to run. */
export const seededRandom = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Repetition-loop guard: true when the tail of `tokens` is one block of `period`
 * tokens repeated back to back often enough that it cannot be speech
 * (≥ 4 repeats and ≥ 24 tokens in the repeated run). Returns the period, or 0.
 */
export const repetitionPeriod = (tokens: ReadonlyArray<number>): number => {
  const n = tokens.length
  for (let p = 1; p <= 48 && p * 4 <= n; p++) {
    const need = Math.max(4 * p, 24)
    if (need > n) continue
    let ok = true
    for (let i = n - need; i < n - p; i++) {
      if (tokens[i] !== tokens[i + p]) {
        ok = false
        break
      }
    }
    if (ok) return p
  }
  return 0
}
