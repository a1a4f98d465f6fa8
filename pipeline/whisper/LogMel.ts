import { makeRealFftPlan } from "./Fft.ts"

/**
 * Whisper log-mel front end, numerically the WhisperFeatureExtractor recipe:
 * audio zero-padded/cut to 30 s, centred STFT (reflect pad n_fft/2), periodic Hann,
 * power spectrum, Slaney-scale / Slaney-normalised mel filters over 0–8 kHz,
 * log10(max(x, 1e-10)), clamp to (global max − 8), (x + 4) / 4, last frame dropped.
 *
 * Output layout is [nMels, nFrames] (mel-bin major), written into a caller-provided
 * Float32Array so a batch of windows can be written straight into one encoder input.
 * Frames that only see zero padding have an all-zero spectrum: they are filled with
 * log10(1e-10) without an FFT, which makes short windows cheap.
 */

export const SAMPLE_RATE = 16000
export const N_FFT = 400
export const HOP = 160
export const N_SAMPLES = 480000
export const N_FRAMES = 3000

const hzToMel = (hz: number): number => {
  const fSp = 200 / 3
  const minLogHz = 1000
  const minLogMel = minLogHz / fSp
  const logStep = Math.log(6.4) / 27
  return hz >= minLogHz ? minLogMel + Math.log(hz / minLogHz) / logStep : hz / fSp
}

const melToHz = (mel: number): number => {
  const fSp = 200 / 3
  const minLogHz = 1000
  const minLogMel = minLogHz / fSp
  const logStep = Math.log(6.4) / 27
  return mel >= minLogMel ? minLogHz * Math.exp(logStep * (mel - minLogMel)) : fSp * mel
}

interface Filter {
  readonly start: number
  readonly weights: Float64Array
}

/** Slaney triangular filters, stored sparsely as [first nonzero bin, weights]. */
const melFilters = (nMels: number, nBins: number, sampleRate: number): Array<Filter> => {
  const fftFreqs = Array.from({ length: nBins }, (_, i) => (i * (sampleRate / 2)) / (nBins - 1))
  const melMin = hzToMel(0)
  const melMax = hzToMel(sampleRate / 2)
  const points = Array.from({ length: nMels + 2 }, (_, i) => melToHz(melMin + ((melMax - melMin) * i) / (nMels + 1)))
  const filters: Array<Filter> = []
  for (let m = 0; m < nMels; m++) {
    const lo = points[m]!
    const mid = points[m + 1]!
    const hi = points[m + 2]!
    const enorm = 2 / (hi - lo)
    const dense = fftFreqs.map((f) => {
      const down = (f - lo) / (mid - lo)
      const up = (hi - f) / (hi - mid)
      return Math.max(0, Math.min(down, up)) * enorm
    })
    let start = dense.findIndex((w) => w > 0)
    let end = dense.length - 1
    while (end >= 0 && dense[end]! <= 0) end--
    if (start < 0) {
      start = 0
      end = -1
    }
    filters.push({ start, weights: Float64Array.from(dense.slice(start, end + 1)) })
  }
  return filters
}

export interface LogMelExtractor {
  readonly nMels: number
  /**
   * Writes the [nMels, 3000] log-mel of `samples` (16 kHz mono, first 30 s used) into
   * `out` starting at `offset`.
   */
  readonly compute: (samples: Float32Array, out: Float32Array, offset?: number) => void
}

export const makeLogMelExtractor = (nMels = 80): LogMelExtractor => {
  const nBins = N_FFT / 2 + 1
  const filters = melFilters(nMels, nBins, SAMPLE_RATE)
  const window = new Float64Array(N_FFT)
  for (let i = 0; i < N_FFT; i++) window[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / N_FFT)
  const plan = makeRealFftPlan(N_FFT)
  const re = new Float64Array(N_FFT)
  const outRe = new Float64Array(nBins)
  const outIm = new Float64Array(nBins)
  const power = new Float64Array(nBins)
  const padded = new Float64Array(N_SAMPLES + N_FFT)
  const half = N_FFT / 2
  const floor = -10 // log10(1e-10)

  const compute = (samples: Float32Array, out: Float32Array, offset = 0): void => {
    const len = Math.min(samples.length, N_SAMPLES)
    // padded[j] is the centred signal at index j - half, reflect-padded at both ends.
    padded.fill(0)
    for (let i = 0; i < len; i++) padded[i + half] = samples[i]!
    for (let i = 1; i <= half; i++) {
      padded[half - i] = i < N_SAMPLES ? (i < len ? samples[i]! : 0) : 0
      const src = N_SAMPLES - 1 - i
      padded[half + N_SAMPLES - 1 + i] = src < len ? samples[src]! : 0
    }
    // First frame whose window lies entirely in the zero tail (reflected tail is zero too).
    const lastNonZero = len + half // exclusive index in `padded` of the last sample that can be non-zero
    let maxVal = -Infinity
    for (let t = 0; t < N_FRAMES; t++) {
      const base = t * HOP
      if (base >= lastNonZero && base + N_FFT <= N_SAMPLES + half) {
        for (let m = 0; m < nMels; m++) out[offset + m * N_FRAMES + t] = floor
        if (floor > maxVal) maxVal = floor
        continue
      }
      for (let i = 0; i < N_FFT; i++) re[i] = padded[base + i]! * window[i]!
      plan.forward(re, outRe, outIm)
      for (let k = 0; k < nBins; k++) power[k] = outRe[k]! * outRe[k]! + outIm[k]! * outIm[k]!
      for (let m = 0; m < nMels; m++) {
        const f = filters[m]!
        let acc = 0
        const w = f.weights
        for (let k = 0; k < w.length; k++) acc += w[k]! * power[f.start + k]!
        const v = Math.log10(acc > 1e-10 ? acc : 1e-10)
        out[offset + m * N_FRAMES + t] = v
        if (v > maxVal) maxVal = v
      }
    }
    const minVal = maxVal - 8
    const end = offset + nMels * N_FRAMES
    for (let i = offset; i < end; i++) {
      const v = out[i]!
      out[i] = ((v > minVal ? v : minVal) + 4) / 4
    }
  }
  return { nMels, compute }
}
