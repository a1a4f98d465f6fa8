/**
 * Incremental speech segmentation over Silero probabilities (pure, no model inside).
 *
 * Same rules as silero-vad's `get_speech_timestamps` (5.x/6.x, `max_speech_duration_s` = inf):
 * - frame i covers samples [512·i, 512·i + 512); a region starts at 512·i on the first frame with
 *   p ≥ threshold while idle;
 * - while in a region, the first frame with p < negThreshold marks `tempEnd` (= its start); a
 *   frame with p ≥ threshold clears it; the region ends at `tempEnd` once a frame with
 *   p < negThreshold arrives at least minSilence after it;
 * - a region is kept only if end − start > minSpeech; a region still open at the end of the
 *   stream ends at the last sample;
 * - padding: the first start moves back by pad (not below 0); between two regions whose raw gap is
 *   under 2·pad each side takes half the gap, else each side takes pad; the last end moves on by
 *   pad (not past the end of the audio).
 *
 * What differs from upstream, on purpose, to stream with bounded memory: a region may not grow
 * past `maxRegionSamples`. When it would, it is cut — at its pending silence (`tempEnd`) if one is
 * open, exactly like upstream's max-speech rule, otherwise at the lowest-probability frame of its
 * second half. A cut without silence yields a piece with `continues: true`: the next region starts
 * at the very sample this one ends, and they are one spoken passage. With the defaults (29 s) this
 * never changes regions shorter than 29 s, i.e. everything on ordinary speech.
 *
 * Regions are emitted as soon as their padded bounds are final (at most 2·pad after their end),
 * each with its samples and the probabilities of the frames it overlaps.
 */

export const FRAME = 512

export interface SegmenterOptions {
  readonly sampleRate: number
  readonly threshold: number
  readonly negThreshold: number
  readonly minSpeechMs: number
  readonly minSilenceMs: number
  readonly speechPadMs: number
  /** Upper bound of one emitted region (padding included, ± pad). */
  readonly maxRegionSeconds: number
}

export const defaultSegmenterOptions: SegmenterOptions = {
  sampleRate: 16_000,
  threshold: 0.5,
  negThreshold: 0.35,
  minSpeechMs: 250,
  minSilenceMs: 100,
  speechPadMs: 30,
  maxRegionSeconds: 29
}

export interface SpeechRegion {
  /** Absolute sample bounds in the source (padded), end exclusive. */
  readonly startSample: number
  readonly endSample: number
  /** The source samples [startSample, endSample). */
  readonly samples: Float32Array
  /** probs[k] is the speech probability of frame firstFrame + k; the frames cover the region. */
  readonly firstFrame: number
  readonly probs: Float32Array
  /** True when the next region starts at endSample because a long passage was cut. */
  readonly continues: boolean
}

/** Growable window over an absolute-indexed sequence, trimmed from the front. */
class Tape {
  private data: Float32Array
  private length = 0
  /** Absolute index of data[0]. */
  start = 0

  constructor(capacity: number) {
    this.data = new Float32Array(capacity)
  }

  get end(): number {
    return this.start + this.length
  }

  append(values: ArrayLike<number>, count = values.length) {
    if (this.length + count > this.data.length) {
      const grown = new Float32Array(Math.max(this.data.length * 2, this.length + count))
      grown.set(this.data.subarray(0, this.length))
      this.data = grown
    }
    for (let i = 0; i < count; i++) this.data[this.length + i] = values[i]!
    this.length += count
  }

  /** Copy of absolute range [from, to), clamped to what is held. */
  slice(from: number, to: number): Float32Array {
    const a = Math.max(0, from - this.start)
    const b = Math.max(a, Math.min(this.length, to - this.start))
    return this.data.slice(a, b)
  }

  at(index: number): number {
    return this.data[index - this.start] ?? 0
  }

  /** Drops everything before absolute index `from`. */
  dropBefore(from: number) {
    const n = Math.min(this.length, from - this.start)
    if (n <= 0) return
    this.data.copyWithin(0, n, this.length)
    this.length -= n
    this.start += n
  }
}

interface Pending {
  readonly rawStart: number
  readonly rawEnd: number
  paddedStart: number
  readonly continues: boolean
}

export class SpeechSegmenter {
  private readonly o: SegmenterOptions
  private readonly minSpeech: number
  private readonly minSilence: number
  private readonly pad: number
  private readonly maxRegion: number
  private readonly samples: Tape
  private readonly probs: Tape
  private frame = 0
  private total = 0
  private triggered = false
  private rawStart = 0
  private openStart = 0
  /** The open region continues a cut piece (no min-speech check, no start padding). */
  private openIsContinuation = false
  private tempEnd = 0
  private pending: Pending | undefined
  private lastRawEnd: number | undefined
  private speechSamples = 0
  private finished = false

  constructor(options: Partial<SegmenterOptions> = {}) {
    this.o = { ...defaultSegmenterOptions, ...options }
    const perMs = this.o.sampleRate / 1000
    this.minSpeech = this.o.minSpeechMs * perMs
    this.minSilence = this.o.minSilenceMs * perMs
    this.pad = Math.floor(this.o.speechPadMs * perMs)
    this.maxRegion = Math.floor(this.o.maxRegionSeconds * this.o.sampleRate)
    const initial = Math.min(this.maxRegion, 30 * this.o.sampleRate) + 4 * FRAME
    this.samples = new Tape(initial)
    this.probs = new Tape(Math.ceil(initial / FRAME) + 8)
  }

  /** Samples seen so far. */
  get totalSamples(): number {
    return this.total
  }

  /** Samples covered by emitted regions so far. */
  get coveredSamples(): number {
    return this.speechSamples
  }

  /**
   * One frame: `valid` real samples (512, fewer only for the zero-padded last frame) and the
   * model's probability for it. Returns the regions that became final.
   */
  push(frame: Float32Array, valid: number, prob: number): Array<SpeechRegion> {
    if (this.finished) throw new Error("SpeechSegmenter: push after finish")
    const out: Array<SpeechRegion> = []
    const i = this.frame
    const cur = i * FRAME
    this.samples.append(frame, valid)
    this.probs.append([prob])
    this.total += valid
    this.frame += 1

    if (prob >= this.o.threshold && this.tempEnd) this.tempEnd = 0
    if (prob >= this.o.threshold && !this.triggered) {
      this.open(cur, false, out)
    } else if (prob < this.o.negThreshold && this.triggered) {
      if (!this.tempEnd) this.tempEnd = cur
      if (cur - this.tempEnd >= this.minSilence) this.close(this.tempEnd, out)
    }
    if (this.triggered && this.frame * FRAME - this.openStart >= this.maxRegion) this.cut(out)
    this.settlePending(this.total - 2 * this.pad >= (this.pending?.rawEnd ?? Infinity), out)
    this.trim()
    return out
  }

  /** Ends the stream; returns the last regions. */
  finish(): Array<SpeechRegion> {
    if (this.finished) return []
    this.finished = true
    const out: Array<SpeechRegion> = []
    if (this.triggered) {
      this.triggered = false
      this.tempEnd = 0
      if (this.openIsContinuation || this.total - this.rawStart > this.minSpeech) {
        this.queue({ rawStart: this.rawStart, rawEnd: this.total, paddedStart: this.openStart, continues: false }, out)
      }
    }
    this.settlePending(true, out)
    return out
  }

  private open(rawStart: number, continuation: boolean, out: Array<SpeechRegion>) {
    this.triggered = true
    this.rawStart = rawStart
    this.openIsContinuation = continuation
    if (continuation) {
      this.openStart = rawStart
      return
    }
    const prev = this.lastRawEnd
    if (prev === undefined) {
      this.openStart = Math.max(0, rawStart - this.pad)
    } else {
      const silence = rawStart - prev
      const share = silence < 2 * this.pad ? Math.floor(silence / 2) : this.pad
      this.openStart = Math.max(0, rawStart - share)
    }
    // The previous region's end padding is now known.
    this.settlePending(true, out, rawStart)
  }

  private close(rawEnd: number, out: Array<SpeechRegion>) {
    this.triggered = false
    this.tempEnd = 0
    if (this.openIsContinuation || rawEnd - this.rawStart > this.minSpeech) {
      this.queue({ rawStart: this.rawStart, rawEnd, paddedStart: this.openStart, continues: false }, out)
    }
  }

  /** The open region reached maxRegion: end it at its pending silence, or split it. */
  private cut(out: Array<SpeechRegion>) {
    if (this.tempEnd && this.tempEnd - this.openStart >= this.maxRegion / 2) {
      this.close(this.tempEnd, out)
      return
    }
    const from = Math.ceil((this.openStart + this.maxRegion / 2) / FRAME)
    const to = this.frame - 1
    let best = to
    let bestP = Infinity
    for (let f = from; f <= to; f++) {
      const p = this.probs.at(f)
      if (p < bestP) {
        bestP = p
        best = f
      }
    }
    const at = Math.max(this.openStart + FRAME, best * FRAME + FRAME / 2)
    this.emit(this.openStart, at, true, out)
    this.tempEnd = this.tempEnd > at ? this.tempEnd : 0
    this.open(at, true, out)
  }

  private queue(region: Pending, out: Array<SpeechRegion>) {
    this.settlePending(true, out, region.rawStart)
    this.pending = region
    this.lastRawEnd = region.rawEnd
  }

  /**
   * Emits the pending region when its end padding is final: `known` says the next region's start
   * (nextRawStart) or the end of audio is known, or the gap is already ≥ 2·pad.
   */
  private settlePending(known: boolean, out: Array<SpeechRegion>, nextRawStart?: number) {
    const p = this.pending
    if (!p || !known) return
    const gap = nextRawStart === undefined ? Infinity : nextRawStart - p.rawEnd
    let end = gap < 2 * this.pad ? p.rawEnd + Math.floor(gap / 2) : p.rawEnd + this.pad
    if (this.finished) end = Math.min(end, this.total)
    this.pending = undefined
    this.emit(p.paddedStart, end, p.continues, out)
  }

  private emit(start: number, end: number, continues: boolean, out: Array<SpeechRegion>) {
    if (end <= start) return
    const firstFrame = Math.floor(start / FRAME)
    const lastFrame = Math.ceil(end / FRAME)
    out.push({
      startSample: start,
      endSample: end,
      samples: this.samples.slice(start, end),
      firstFrame,
      probs: this.probs.slice(firstFrame, lastFrame),
      continues
    })
    this.speechSamples += end - start
  }

  /** Keeps only what a future region can still need. */
  private trim() {
    let keep = this.frame * FRAME - this.pad
    if (this.triggered) keep = Math.min(keep, this.openStart)
    if (this.pending) keep = Math.min(keep, this.pending.paddedStart)
    keep = Math.max(0, keep)
    if (keep - this.samples.start > 8 * FRAME) {
      this.samples.dropBefore(keep)
      this.probs.dropBefore(Math.floor(keep / FRAME))
    }
  }
}
