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

const C1 = Math.cos((2 * Math.PI) / 5)
const C2 = Math.cos((4 * Math.PI) / 5)
const S1 = Math.sin((2 * Math.PI) / 5)
const S2 = Math.sin((4 * Math.PI) / 5)

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
    if (p === 4) {
      for (let u = 0; u < m; u++) {
        const k0 = outOff + u
        const k1 = k0 + m
        const k2 = k1 + m
        const k3 = k2 + m
        const t1 = u * fstride
        const t2 = 2 * t1
        const t3 = 3 * t1
        const ar = oRe[k0]!
        const ai = oIm[k0]!
        const br = oRe[k1]! * twRe[t1]! - oIm[k1]! * twIm[t1]!
        const bi = oRe[k1]! * twIm[t1]! + oIm[k1]! * twRe[t1]!
        const cr = oRe[k2]! * twRe[t2]! - oIm[k2]! * twIm[t2]!
        const ci = oRe[k2]! * twIm[t2]! + oIm[k2]! * twRe[t2]!
        const dr = oRe[k3]! * twRe[t3]! - oIm[k3]! * twIm[t3]!
        const di = oRe[k3]! * twIm[t3]! + oIm[k3]! * twRe[t3]!
        const s0r = ar + cr
        const s0i = ai + ci
        const s1r = ar - cr
        const s1i = ai - ci
        const s2r = br + dr
        const s2i = bi + di
        const s3r = br - dr
        const s3i = bi - di
        oRe[k0] = s0r + s2r
        oIm[k0] = s0i + s2i
        oRe[k2] = s0r - s2r
        oIm[k2] = s0i - s2i
        // forward transform: multiply (b - d) by -i
        oRe[k1] = s1r + s3i
        oIm[k1] = s1i - s3r
        oRe[k3] = s1r - s3i
        oIm[k3] = s1i + s3r
      }
      return
    }
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
    if (p === 5) {
      // The 5-point DFT with its constant roots written out: pairs (x1, x4) and (x2, x3)
      // share cosines and differ in the sign of the sines, so 5 outputs cost 2 real
      // products per cosine and sine term instead of the generic loop's 16 complex products.
      for (let u = 0; u < m; u++) {
        const k0 = outOff + u
        const k1 = k0 + m
        const k2 = k1 + m
        const k3 = k2 + m
        const k4 = k3 + m
        const t1 = (u * fstride) % n
        const t2 = (2 * u * fstride) % n
        const t3 = (3 * u * fstride) % n
        const t4 = (4 * u * fstride) % n
        const x0r = oRe[k0]!
        const x0i = oIm[k0]!
        const x1r = oRe[k1]! * twRe[t1]! - oIm[k1]! * twIm[t1]!
        const x1i = oRe[k1]! * twIm[t1]! + oIm[k1]! * twRe[t1]!
        const x2r = oRe[k2]! * twRe[t2]! - oIm[k2]! * twIm[t2]!
        const x2i = oRe[k2]! * twIm[t2]! + oIm[k2]! * twRe[t2]!
        const x3r = oRe[k3]! * twRe[t3]! - oIm[k3]! * twIm[t3]!
        const x3i = oRe[k3]! * twIm[t3]! + oIm[k3]! * twRe[t3]!
        const x4r = oRe[k4]! * twRe[t4]! - oIm[k4]! * twIm[t4]!
        const x4i = oRe[k4]! * twIm[t4]! + oIm[k4]! * twRe[t4]!
        const a1r = x1r + x4r
        const a1i = x1i + x4i
        const b1r = x1r - x4r
        const b1i = x1i - x4i
        const a2r = x2r + x3r
        const a2i = x2i + x3i
        const b2r = x2r - x3r
        const b2i = x2i - x3i
        oRe[k0] = x0r + a1r + a2r
        oIm[k0] = x0i + a1i + a2i
        // X1, X4 = A ∓ iT and X2, X3 = B ∓ iU (forward transform, roots e^{-2πi q/5}).
        const Ar = x0r + C1 * a1r + C2 * a2r
        const Ai = x0i + C1 * a1i + C2 * a2i
        const Tr = S1 * b1r + S2 * b2r
        const Ti = S1 * b1i + S2 * b2i
        const Br = x0r + C2 * a1r + C1 * a2r
        const Bi = x0i + C2 * a1i + C1 * a2i
        const Ur = S2 * b1r - S1 * b2r
        const Ui = S2 * b1i - S1 * b2i
        oRe[k1] = Ar + Ti
        oIm[k1] = Ai - Tr
        oRe[k4] = Ar - Ti
        oIm[k4] = Ai + Tr
        oRe[k2] = Br + Ui
        oIm[k2] = Bi - Ur
        oRe[k3] = Br - Ui
        oIm[k3] = Bi + Ur
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

/**
 * Real-input FFT of even size n through a complex FFT of size n/2 (even samples as the
 * real part, odd samples as the imaginary part) and one recombination pass. Writes bins
 * 0..n/2 of the spectrum.
 */
export interface RealFftPlan {
  readonly n: number
  readonly forward: (input: Float64Array, outRe: Float64Array, outIm: Float64Array) => void
}

export const makeRealFftPlan = (n: number): RealFftPlan => {
  const h = n / 2
  const half = makeFftPlan(h)
  const zr = new Float64Array(h)
  const zi = new Float64Array(h)
  const Zr = new Float64Array(h)
  const Zi = new Float64Array(h)
  const wr = new Float64Array(h + 1)
  const wi = new Float64Array(h + 1)
  for (let k = 0; k <= h; k++) {
    wr[k] = Math.cos((-2 * Math.PI * k) / n)
    wi[k] = Math.sin((-2 * Math.PI * k) / n)
  }
  const forward = (input: Float64Array, outRe: Float64Array, outIm: Float64Array): void => {
    for (let j = 0; j < h; j++) {
      zr[j] = input[2 * j]!
      zi[j] = input[2 * j + 1]!
    }
    half.forward(zr, zi, Zr, Zi)
    for (let k = 0; k <= h; k++) {
      const a = k === h ? 0 : k
      const b = k === 0 ? 0 : h - k
      // E = (Z[k] + conj(Z[h-k])) / 2, O = (Z[k] - conj(Z[h-k])) / (2i)
      const er = (Zr[a]! + Zr[b]!) / 2
      const ei = (Zi[a]! - Zi[b]!) / 2
      const or = (Zi[a]! + Zi[b]!) / 2
      const oi = -(Zr[a]! - Zr[b]!) / 2
      outRe[k] = er + wr[k]! * or - wi[k]! * oi
      outIm[k] = ei + wr[k]! * oi + wi[k]! * or
    }
  }
  return { n, forward }
}
