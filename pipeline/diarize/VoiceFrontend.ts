/**
 * The voice encoder's input, numerically Resemblyzer 0.1.4's `wav_to_mel_spectrogram` on
 * librosa 0.11 (see the voice-encoder section of shared/models/README.md):
 * 16 kHz mono → centred STFT (n_fft 400, hop 160, zero padding of 200 each side, periodic
 * Hann) → power |X|² → 40 Slaney mel bands over 0–8 kHz with Slaney area normalisation →
 * `[frames, 40]` float32, **linear** (no log, no mean normalisation).
 *
 * Float32 rounding follows the reference where it is visible: filter weights are stored as
 * float32 before and after the area normalisation, the spectrum as complex64 and its power as
 * float32. Accumulations run in float64, so values agree with librosa to ~1e-7 relative.
 *
 * Volume normalisation is Resemblyzer's `normalize_volume(wav, -30, increase_only=True)`:
 * the caller decides which samples it is measured on (the diarizer measures speech only).
 */
import { makeRealFftPlan } from "../whisper/Fft.ts"

export const SAMPLE_RATE = 16_000
export const N_FFT = 400
export const HOP = 160
export const N_MELS = 40
export const N_BINS = N_FFT / 2 + 1
/** Partial length of `embed_utterance` (1.6 s) and its step at 1.3 partials per second. */
export const PARTIAL_FRAMES = 160
export const PARTIAL_STEP = Math.round(SAMPLE_RATE / 1.3 / HOP)
/** The last partial is kept only if real audio covers at least this share of it. */
const MIN_LAST_COVERAGE = 0.75
export const TARGET_DBFS = -30

const F_SP = 200 / 3
const MIN_LOG_HZ = 1000
const MIN_LOG_MEL = MIN_LOG_HZ / F_SP
const LOG_STEP = Math.log(6.4) / 27

const hzToMel = (hz: number): number => (hz >= MIN_LOG_HZ ? MIN_LOG_MEL + Math.log(hz / MIN_LOG_HZ) / LOG_STEP : hz / F_SP)
const melToHz = (mel: number): number => (mel >= MIN_LOG_MEL ? MIN_LOG_HZ * Math.exp(LOG_STEP * (mel - MIN_LOG_MEL)) : F_SP * mel)

/** librosa.filters.mel(sr=16000, n_fft=400, n_mels=40, htk=False, norm="slaney"), row-major [40, 201]. */
export const melFilterbank = (): Float32Array => {
  const out = new Float32Array(N_MELS * N_BINS)
  const minMel = hzToMel(0)
  const maxMel = hzToMel(SAMPLE_RATE / 2)
  // numpy.linspace: start + i·step, with the last point exactly `stop`.
  const step = (maxMel - minMel) / (N_MELS + 1)
  const melF = Array.from({ length: N_MELS + 2 }, (_, i) => melToHz(i === N_MELS + 1 ? maxMel : minMel + i * step))
  const fftFreq = (k: number) => k * (SAMPLE_RATE / N_FFT)
  for (let m = 0; m < N_MELS; m++) {
    const lo = melF[m]!
    const mid = melF[m + 1]!
    const hi = melF[m + 2]!
    const enorm = 2 / (hi - lo)
    for (let k = 0; k < N_BINS; k++) {
      const lower = -(lo - fftFreq(k)) / (mid - lo)
      const upper = (hi - fftFreq(k)) / (hi - mid)
      const tri = Math.fround(Math.max(0, Math.min(lower, upper)))
      out[m * N_BINS + k] = Math.fround(tri * enorm)
    }
  }
  return out
}

/** `20·log10(rms(x·32767) / 32767)`; −Infinity for silence. */
export const dbfs = (samples: Float32Array, ranges?: ReadonlyArray<readonly [number, number]>): number => {
  let sum = 0
  let n = 0
  for (const [from, to] of ranges ?? [[0, samples.length] as const]) {
    for (let i = from; i < to; i++) {
      const v = samples[i]! * 32767
      sum += v * v
    }
    n += Math.max(0, to - from)
  }
  if (n === 0 || sum === 0) return -Infinity
  return 20 * Math.log10(Math.sqrt(sum / n) / 32767)
}

/**
 * The gain that brings audio at `level` dBFS up to −30 dBFS; 1 when it is already louder,
 * and 1 for silence (Resemblyzer would divide by zero there).
 */
export const volumeGain = (level: number): number =>
  Number.isFinite(level) && level < TARGET_DBFS ? Math.pow(10, (TARGET_DBFS - level) / 20) : 1

/** Frames of a centred STFT over `length` samples: 1 + ⌊length/160⌋. */
export const frameCount = (length: number): number => 1 + Math.floor(length / HOP)

export interface MelExtractor {
  /**
   * `[frames, 40]` linear power mel of `samples[from, to)` times `gain`, as if those samples
   * were the whole signal (zero padding of 200 on each side).
   */
  readonly compute: (samples: Float32Array, from?: number, to?: number, gain?: number) => Float32Array
}

export const makeMelExtractor = (): MelExtractor => {
  const filters = melFilterbank()
  // Each filter's nonzero span, so a frame costs ~2 multiplies per bin instead of 40.
  const spans = Array.from({ length: N_MELS }, (_, m) => {
    let first = 0
    while (first < N_BINS && filters[m * N_BINS + first] === 0) first++
    let last = N_BINS - 1
    while (last >= first && filters[m * N_BINS + last] === 0) last--
    return [first, last + 1] as const
  })
  const window = new Float64Array(N_FFT)
  for (let i = 0; i < N_FFT; i++) window[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / N_FFT)
  const plan = makeRealFftPlan(N_FFT)
  const frame = new Float64Array(N_FFT)
  const re = new Float64Array(N_BINS)
  const im = new Float64Array(N_BINS)
  const power = new Float64Array(N_BINS)
  const half = N_FFT / 2

  const compute = (samples: Float32Array, from = 0, to = samples.length, gain = 1): Float32Array => {
    const length = Math.max(0, to - from)
    const frames = frameCount(length)
    const out = new Float32Array(frames * N_MELS)
    for (let t = 0; t < frames; t++) {
      // Frame t covers signal samples [t·hop − 200, t·hop + 200); outside the signal is zero.
      const origin = t * HOP - half
      for (let i = 0; i < N_FFT; i++) {
        const j = origin + i
        frame[i] = j >= 0 && j < length ? Math.fround(samples[from + j]! * gain) * window[i]! : 0
      }
      plan.forward(frame, re, im)
      for (let k = 0; k < N_BINS; k++) {
        const r = Math.fround(re[k]!)
        const c = Math.fround(im[k]!)
        const magnitude = Math.fround(Math.sqrt(r * r + c * c))
        power[k] = Math.fround(magnitude * magnitude)
      }
      for (let m = 0; m < N_MELS; m++) {
        const [first, end] = spans[m]!
        let acc = 0
        for (let k = first; k < end; k++) acc += filters[m * N_BINS + k]! * power[k]!
        out[t * N_MELS + m] = acc
      }
    }
    return out
  }
  return { compute }
}

/**
 * Partial windows of Resemblyzer's `embed_utterance` over `samples` samples: frame ranges of
 * 160 frames every 77, the last dropped when real audio covers < 75 % of it (unless it is the
 * only one), plus the length the signal must be zero-padded to before the mel.
 */
export const utterancePartials = (samples: number): { readonly slices: ReadonlyArray<readonly [number, number]>; readonly paddedLength: number } => {
  const nFrames = Math.ceil((samples + 1) / HOP)
  const steps = Math.max(1, nFrames - PARTIAL_FRAMES + PARTIAL_STEP + 1)
  const slices: Array<readonly [number, number]> = []
  for (let i = 0; i < steps; i += PARTIAL_STEP) slices.push([i, i + PARTIAL_FRAMES])
  const last = slices[slices.length - 1]!
  const coverage = (samples - last[0] * HOP) / (PARTIAL_FRAMES * HOP)
  if (coverage < MIN_LAST_COVERAGE && slices.length > 1) slices.pop()
  const paddedLength = Math.max(samples, slices[slices.length - 1]![1] * HOP)
  return { slices, paddedLength }
}
