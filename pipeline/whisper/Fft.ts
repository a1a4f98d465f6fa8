/**
 * Mixed-radix complex FFT for sizes whose prime factors are small (Whisper's n_fft
 * is 400 = 2^4 · 5^2, not a power of two). Decimation in time with the recursion
 * fixed at plan time; twiddles precomputed in float64. One plan is reused for every
 * frame, with its own scratch, so a transform allocates nothing.
 */
export interface FftPlan {
  readonly n: number
  /** In-place-free transform: reads `re`/`im` (length n), writes `outRe`/`outIm`. */
  readonly forward: (re: Float64Array, im: Float64Array, outRe: Float64Array, outIm: Float64Array) => void
}

const factorize = (n: number): Array<number> => {
  const factors: Array<number> = []
  let rest = n
  for (const p of [4, 2, 3, 5]) {
    while (rest % p === 0) {
      factors.push(p)
      rest /= p
    }
  }
  for (let p = 7; rest > 1; p += 2) {
    while (rest % p === 0) {
      factors.push(p)
      rest /= p
    }
  }
  return factors
}

export const makeFftPlan = (n: number): FftPlan => {
  const factors = factorize(n)
  const twRe = new Float64Array(n)
  const twIm = new Float64Array(n)
  for (let k = 0; k < n; k++) {
    twRe[k] = Math.cos((-2 * Math.PI * k) / n)
    twIm[k] = Math.sin((-2 * Math.PI * k) / n)
  }
  const maxP = Math.max(...factors, 1)
  const sRe = new Float64Array(maxP)
  const sIm = new Float64Array(maxP)

  let inRe: Float64Array = twRe
  let inIm: Float64Array = twIm
  let oRe: Float64Array = twRe
  let oIm: Float64Array = twIm

  // Generic butterfly of radix p over m sub-transforms of length m at stride fstride.
  const butterfly = (outOff: number, fstride: number, m: number, p: number): void => {
    if (p === 2) {
      for (let u = 0; u < m; u++) {
        const a = outOff + u
        const b = a + m
        const t = (u * fstride) % n
        const wr = twRe[t]!
        const wi = twIm[t]!
        const br = oRe[b]! * wr - oIm[b]! * wi
        const bi = oRe[b]! * wi + oIm[b]! * wr
        const ar = oRe[a]!
        const ai = oIm[a]!
        oRe[a] = ar + br
        oIm[a] = ai + bi
        oRe[b] = ar - br
        oIm[b] = ai - bi
      }
      return
    }
    for (let u = 0; u < m; u++) {
      for (let q = 0; q < p; q++) {
        const k = outOff + u + q * m
        const t = (q * u * fstride) % n
        const wr = twRe[t]!
        const wi = twIm[t]!
        sRe[q] = oRe[k]! * wr - oIm[k]! * wi
        sIm[q] = oRe[k]! * wi + oIm[k]! * wr
      }
      for (let q1 = 0; q1 < p; q1++) {
        const k = outOff + u + q1 * m
        let accRe = sRe[0]!
        let accIm = sIm[0]!
        const step = ((q1 * m * fstride) % n)
        let t = 0
        for (let q = 1; q < p; q++) {
          t += step
          if (t >= n) t -= n
          accRe += sRe[q]! * twRe[t]! - sIm[q]! * twIm[t]!
          accIm += sRe[q]! * twIm[t]! + sIm[q]! * twRe[t]!
        }
        oRe[k] = accRe
        oIm[k] = accIm
      }
    }
  }

  const work = (outOff: number, inOff: number, fstride: number, stage: number, len: number): void => {
    const p = factors[stage]!
    const m = len / p
    if (m === 1) {
      for (let j = 0; j < p; j++) {
        oRe[outOff + j] = inRe[inOff + j * fstride]!
        oIm[outOff + j] = inIm[inOff + j * fstride]!
      }
    } else {
      for (let q = 0; q < p; q++) work(outOff + q * m, inOff + q * fstride, fstride * p, stage + 1, m)
    }
    butterfly(outOff, fstride, m, p)
  }

  const forward = (re: Float64Array, im: Float64Array, outRe: Float64Array, outIm: Float64Array): void => {
    inRe = re
    inIm = im
    oRe = outRe
    oIm = outIm
    if (n === 1) {
      outRe[0] = re[0]!
      outIm[0] = im[0]!
      return
    }
    work(0, 0, 1, 0, n)
  }
  return { n, forward }
}
