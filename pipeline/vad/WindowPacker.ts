/**
 * Packs speech regions into Whisper windows of at most 30 s (pure).
 *
 * Why: padding short audio to 30 s costs a full encoder pass (models README), so speech regions are
 * concatenated into full windows. Rules:
 * - regions are taken in order; consecutive regions in one window are separated by `gapSeconds` of
 *   digital silence so the model hears a pause (and can place a segment boundary there); a region
 *   that continues the previous one (`continues`, a cut long passage) is appended without a gap;
 * - a window never exceeds `maxWindowSeconds`: when the next region does not fit, the window is
 *   closed and the region opens the next one;
 * - a region longer than a window is split cleanly (no overlap, no lost sample): each cut falls in
 *   the second half of the allowed span, at the frame with the lowest speech probability when the
 *   region carries probabilities, else at the quietest 32 ms frame (lowest energy).
 * Each window carries a piecewise-linear time map back to the source (`toSourceTime`).
 */
import { Stream } from "effect"
import type { VadEvent, VadSummary } from "./VoiceActivity.ts"

const FRAME = 512

export interface PackerOptions {
  readonly sampleRate: number
  readonly maxWindowSeconds: number
  readonly gapSeconds: number
}

/**
 * 27 s, not 30: Whisper learned from 30 s chunks whose transcripts left out any utterance cut by
 * the chunk's end, so it tends to skip speech that ends within the last second or two of its
 * input (OpenAI's seek loop then re-encodes that tail alone). With 3 s of padding after the last
 * piece the model hears every utterance end. Measured on bench/asr.ts's 10-minute recording
 * (whisper-base): 30 s → 14 windows + 6 re-encoded tails, WER 8.2 %; 28 s → 2 tails, 6.7 %;
 * 27 s → 15 windows and no tail, 6.9 %.
 */
export const defaultPackerOptions: PackerOptions = { sampleRate: 16_000, maxWindowSeconds: 27, gapSeconds: 0.3 }

/** What the packer needs of a region (VoiceActivity's SpeechRegion fits). */
export interface PackInput {
  readonly startSample: number
  readonly endSample: number
  readonly samples: Float32Array
  /** Optional per-frame speech probabilities: probs[k] is frame firstFrame + k (512 samples). */
  readonly probs?: Float32Array | undefined
  readonly firstFrame?: number | undefined
  readonly continues?: boolean | undefined
}

/** One contiguous source span inside a window (seconds). */
export interface WindowPiece {
  readonly windowStart: number
  readonly sourceStart: number
  readonly duration: number
}

export interface PackedWindow {
  /** 0-based position of the window in the file. */
  readonly index: number
  /** At most maxWindowSeconds of 16 kHz samples: speech pieces separated by silent gaps. */
  readonly samples: Float32Array
  readonly pieces: ReadonlyArray<WindowPiece>
  /** Source seconds covered from the first piece's start to the last piece's end. */
  readonly sourceStart: number
  readonly sourceEnd: number
  /** Seconds of speech in the window (gaps excluded). */
  readonly speechSeconds: number
}

/**
 * Window-local seconds → source seconds. Inside a piece the map is linear; a time in an inserted
 * gap maps to the nearer edge of its neighbouring pieces; before the first / after the last piece it
 * clamps to the first start / last end.
 */
export const toSourceTime = (window: Pick<PackedWindow, "pieces">, t: number): number => {
  const pieces = window.pieces
  const first = pieces[0]
  if (!first) return 0
  if (t <= first.windowStart) return first.sourceStart
  for (let k = 0; k < pieces.length; k++) {
    const p = pieces[k]!
    const pEnd = p.windowStart + p.duration
    if (t <= pEnd) return p.sourceStart + (t - p.windowStart)
    const next = pieces[k + 1]
    if (!next) return p.sourceStart + p.duration
    if (t < next.windowStart) {
      return t - pEnd <= next.windowStart - t ? p.sourceStart + p.duration : next.sourceStart
    }
  }
  return first.sourceStart
}

/** A contiguous source span with its samples (after splitting). */
interface Span {
  readonly start: number
  readonly samples: Float32Array
  /** True when this span directly follows the previous span in the source. */
  readonly joined: boolean
}

/** Cut offset (relative to the region) in (lo, hi]: lowest probability frame, else quietest frame. */
const cutPoint = (region: PackInput, offset: number, lo: number, hi: number): number => {
  const probs = region.probs
  const firstFrame = region.firstFrame ?? 0
  let best = hi
  let bestScore = Infinity
  if (probs && probs.length > 0) {
    const absLo = region.startSample + offset + lo
    const absHi = region.startSample + offset + hi
    for (let f = Math.ceil(absLo / FRAME); (f + 1) * FRAME <= absHi; f++) {
      const p = probs[f - firstFrame]
      if (p !== undefined && p < bestScore) {
        bestScore = p
        best = f * FRAME + FRAME / 2 - region.startSample - offset
      }
    }
  } else {
    for (let at = lo; at + FRAME <= hi; at += FRAME) {
      let energy = 0
      for (let i = offset + at; i < offset + at + FRAME; i++) energy += region.samples[i]! * region.samples[i]!
      if (energy < bestScore) {
        bestScore = energy
        best = at + FRAME / 2
      }
    }
  }
  return Math.min(hi, Math.max(lo + 1, Math.round(best)))
}

/** Splits a region into spans of at most maxSamples each. */
const splitRegion = (region: PackInput, maxSamples: number): Array<Span> => {
  const spans: Array<Span> = []
  let offset = 0
  const total = region.samples.length
  while (total - offset > maxSamples) {
    const cut = cutPoint(region, offset, Math.floor(maxSamples / 2), maxSamples)
    spans.push({ start: region.startSample + offset, samples: region.samples.subarray(offset, offset + cut), joined: offset > 0 })
    offset += cut
  }
  spans.push({ start: region.startSample + offset, samples: region.samples.subarray(offset), joined: offset > 0 })
  return spans
}

/** Incremental packer: push regions in source order, windows come out as soon as they are full. */
export class WindowAssembler {
  private readonly o: PackerOptions
  private readonly maxSamples: number
  private readonly gapSamples: number
  private parts: Array<{ windowStart: number; sourceStart: number; samples: Array<Float32Array>; length: number }> = []
  private length = 0
  private index = 0
  private lastSourceEnd = -1
  private previousContinues = false

  constructor(options: Partial<PackerOptions> = {}) {
    this.o = { ...defaultPackerOptions, ...options }
    this.maxSamples = Math.floor(this.o.maxWindowSeconds * this.o.sampleRate)
    this.gapSamples = Math.round(this.o.gapSeconds * this.o.sampleRate)
  }

  push(region: PackInput): Array<PackedWindow> {
    const out: Array<PackedWindow> = []
    const follows = this.previousContinues && region.startSample === this.lastSourceEnd
    for (const span of splitRegion(region, this.maxSamples)) {
      const joined = span.joined || (follows && span.start === region.startSample)
      const last = this.parts[this.parts.length - 1]
      const contiguous = joined && last !== undefined && span.start === this.lastSourceEnd
      const need = this.parts.length === 0 ? span.samples.length : span.samples.length + (contiguous ? 0 : this.gapSamples)
      if (this.parts.length > 0 && this.length + need > this.maxSamples) {
        out.push(this.flush())
      }
      const tail = this.parts[this.parts.length - 1]
      if (tail && contiguous) {
        tail.samples.push(span.samples)
        tail.length += span.samples.length
        this.length += span.samples.length
      } else {
        if (this.parts.length > 0) this.length += this.gapSamples
        this.parts.push({ windowStart: this.length, sourceStart: span.start, samples: [span.samples], length: span.samples.length })
        this.length += span.samples.length
      }
      this.lastSourceEnd = span.start + span.samples.length
    }
    this.previousContinues = region.continues === true
    return out
  }

  finish(): Array<PackedWindow> {
    return this.parts.length > 0 ? [this.flush()] : []
  }

  private flush(): PackedWindow {
    const sr = this.o.sampleRate
    const samples = new Float32Array(this.length)
    let speech = 0
    for (const part of this.parts) {
      let at = part.windowStart
      for (const s of part.samples) {
        samples.set(s, at)
        at += s.length
      }
      speech += part.length
    }
    const pieces = this.parts.map((p) => ({
      windowStart: p.windowStart / sr,
      sourceStart: p.sourceStart / sr,
      duration: p.length / sr
    }))
    const first = this.parts[0]!
    const last = this.parts[this.parts.length - 1]!
    const window: PackedWindow = {
      index: this.index++,
      samples,
      pieces,
      sourceStart: first.sourceStart / sr,
      sourceEnd: (last.sourceStart + last.length) / sr,
      speechSeconds: speech / sr
    }
    this.parts = []
    this.length = 0
    return window
  }
}

/** Packs a whole list of regions (in source order). */
export const packWindows = (regions: Iterable<PackInput>, options: Partial<PackerOptions> = {}): Array<PackedWindow> => {
  const assembler = new WindowAssembler(options)
  const windows: Array<PackedWindow> = []
  for (const region of regions) windows.push(...assembler.push(region))
  windows.push(...assembler.finish())
  return windows
}

export type PackerEvent =
  | { readonly _tag: "Window"; readonly window: PackedWindow }
  | { readonly _tag: "Done"; readonly summary: VadSummary; readonly windows: number }

/**
 * Streaming form over VoiceActivity events: windows flow out while the file is still decoding, and
 * the last element is `Done` with the VAD summary (duration, speechRatio, speechDetected, regions).
 * Memory is one window plus the VAD's bounded look-behind, whatever the file length.
 */
export const packStream = <E, R>(
  events: Stream.Stream<VadEvent, E, R>,
  options: Partial<PackerOptions> = {}
): Stream.Stream<PackerEvent, E, R> =>
  Stream.suspend(() => {
    const assembler = new WindowAssembler(options)
    let count = 0
    const windowEvent = (window: PackedWindow): PackerEvent => {
      count++
      return { _tag: "Window", window }
    }
    return events.pipe(
      Stream.map((event): Array<PackerEvent> =>
        event._tag === "Region"
          ? assembler.push(event.region).map(windowEvent)
          : [...assembler.finish().map(windowEvent), { _tag: "Done", summary: event.summary, windows: count }]
      ),
      Stream.flattenIterable
    )
  })
