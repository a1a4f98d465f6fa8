/**
 * Silero VAD probabilities for a stream of 512-sample frames, computed in batches of parallel
 * lanes instead of one `session.run` per frame.
 *
 * Why: the model is tiny, so a run of one frame is mostly call overhead (measured with
 * onnxruntime-node, one thread: 229 µs of CPU per frame alone, 77 µs per frame in batches of 8;
 * a 10-minute file: decode + VAD 5.7 → 3.0 s of CPU).
 *
 * How: audio is gathered into blocks of `lanes × laneFrames` frames. Lane 0 of a block continues
 * the recurrent state and the 64-sample context of the block before it, so it is exact (a file
 * shorter than one lane gets upstream's probabilities bit for bit). Lane k > 0 starts from a zero
 * state `warmupFrames` frames before its first frame and discards those outputs: Silero's state
 * mostly forgets within the warm-up, so after it the probabilities stay close to the sequential
 * ones (a08, 63 s: mean difference 0.002, worst single frame 0.13, 5 of 1,969 frames on the
 * other side of 0.5; test/pipeline/vad-lanes.test.ts), and the segmenter's hysteresis absorbs
 * most of that. All lanes step together: one run per step of `lanes` rows.
 */
import * as ort from "onnxruntime-node"
import { StageClock } from "../StageClock.ts"
import { FRAME } from "./SpeechSegmenter.ts"

const CONTEXT = 64
const STATE = 128

/** The part of an onnxruntime session used here (the package's session). */
export interface SileroSession {
  run(feeds: Record<string, ort.Tensor>): Promise<Record<string, ort.Tensor>>
  readonly outputNames: ReadonlyArray<string>
}

export interface ScoredFrame {
  /** 512 samples (zero-padded after `valid` for the file's last frame). */
  readonly frame: Float32Array
  readonly valid: number
  readonly prob: number
}

export interface LaneOptions {
  readonly lanes: number
  readonly laneFrames: number
  readonly warmupFrames: number
}

/**
 * 32 lanes of 8.2 s with 2 s of warm-up: 32 × 256 frames (262 s of audio, 17 MB) per block, 22 %
 * more frames scored than sequentially. Shorter warm-ups or lanes moved single probabilities
 * further (a08: worst difference 0.41 with 128 + 16 frames, 0.13 with 256 + 64). Per frame, one
 * thread: 72 µs in runs of 8 rows, 60 µs of 32, 58 µs of 64; two threads: 56, 44 and 43 µs of
 * wall. 32 takes most of the gain while a block stays a few minutes of audio.
 */
export const defaultLaneOptions: LaneOptions = { lanes: 32, laneFrames: 256, warmupFrames: 64 }

export class SileroLanes {
  private readonly block: Float32Array
  private filled = 0
  /** Recurrent state and context carried into the next block's lane 0. */
  private readonly state = new Float32Array(2 * STATE)
  private readonly context = new Float32Array(CONTEXT)
  private readonly sr = new ort.Tensor("int64", BigInt64Array.of(16000n))

  private readonly session: SileroSession
  private readonly o: LaneOptions

  constructor(session: SileroSession, options: LaneOptions = defaultLaneOptions) {
    this.session = session
    this.o = options
    this.block = new Float32Array(options.lanes * options.laneFrames * FRAME)
  }

  /**
   * Buffers `chunk`; returns the frames of every block it completed, scored, in order. A block is
   * a few hundred ONNX runs (about 0.4 s): `signal` stops it between two runs when the caller is
   * interrupted, so a cancelled job stops computing at once. The lanes are unusable afterwards.
   */
  async push(chunk: Float32Array, signal?: AbortSignal): Promise<Array<ScoredFrame>> {
    const out: Array<ScoredFrame> = []
    let at = 0
    while (at < chunk.length) {
      const n = Math.min(this.block.length - this.filled, chunk.length - at)
      this.block.set(chunk.subarray(at, at + n), this.filled)
      this.filled += n
      at += n
      if (this.filled === this.block.length) {
        for (const f of await this.score(this.o.lanes * this.o.laneFrames, FRAME, signal)) out.push(f)
        this.filled = 0
      }
    }
    return out
  }

  /** Scores what is left; the last partial frame is zero-padded (as upstream). */
  async finish(signal?: AbortSignal): Promise<Array<ScoredFrame>> {
    if (this.filled === 0) return []
    const frames = Math.ceil(this.filled / FRAME)
    const lastValid = this.filled - (frames - 1) * FRAME
    this.block.fill(0, this.filled, frames * FRAME)
    const out = await this.score(frames, lastValid, signal)
    this.filled = 0
    return out
  }

  private async score(frames: number, lastValid: number, signal: AbortSignal | undefined): Promise<Array<ScoredFrame>> {
    const L = this.o.laneFrames
    const lanes = Math.ceil(frames / L)
    const warm = (k: number) => (k === 0 ? 0 : this.o.warmupFrames)
    const len = (k: number) => Math.min(L, frames - k * L)
    // Lane 0 waits out the others' warm-up so that every lane ends together.
    const start = (k: number) => (k === 0 && lanes > 1 ? this.o.warmupFrames : 0)
    let steps = 0
    for (let k = 0; k < lanes; k++) steps = Math.max(steps, start(k) + warm(k) + len(k))

    const input = new Float32Array(lanes * (CONTEXT + FRAME))
    const state = new Float32Array(2 * lanes * STATE)
    state.set(this.state.subarray(0, STATE), 0)
    state.set(this.state.subarray(STATE), lanes * STATE)
    const probs = new Float32Array(frames)
    const block = this.block

    for (let t = 0; t < steps; t++) {
      signal?.throwIfAborted()
      const active: Array<boolean> = []
      for (let k = 0; k < lanes; k++) {
        const j = t - start(k)
        const on = j >= 0 && j < warm(k) + len(k)
        active.push(on)
        const row = input.subarray(k * (CONTEXT + FRAME), (k + 1) * (CONTEXT + FRAME))
        if (!on) {
          row.fill(0)
          continue
        }
        const f = k * L - warm(k) + j
        const s = f * FRAME
        if (s >= CONTEXT) row.set(block.subarray(s - CONTEXT, s), 0)
        else row.set(this.context, 0)
        row.set(block.subarray(s, s + FRAME), CONTEXT)
      }
      const t0 = performance.now()
      const result = await this.session.run({
        input: new ort.Tensor("float32", input, [lanes, CONTEXT + FRAME]),
        state: new ort.Tensor("float32", state, [2, lanes, STATE]),
        sr: this.sr
      })
      StageClock.add("vad (silero)", performance.now() - t0)
      const p = result[this.session.outputNames[0]!]!.data as Float32Array
      const next = result[this.session.outputNames[1]!]!.data as Float32Array
      for (let k = 0; k < lanes; k++) {
        if (!active[k]) continue
        for (const layer of [0, 1]) {
          const off = (layer * lanes + k) * STATE
          state.set(next.subarray(off, off + STATE), off)
        }
        const j = t - start(k)
        if (j >= warm(k)) probs[k * L + j - warm(k)] = p[k]!
      }
    }

    // The next block's lane 0 continues where the last lane stopped.
    const last = lanes - 1
    this.state.set(state.subarray(last * STATE, (last + 1) * STATE), 0)
    this.state.set(state.subarray((lanes + last) * STATE, (lanes + last + 1) * STATE), STATE)
    this.context.set(block.subarray(frames * FRAME - CONTEXT, frames * FRAME))

    const out: Array<ScoredFrame> = []
    for (let f = 0; f < frames; f++) {
      out.push({ frame: block.slice(f * FRAME, (f + 1) * FRAME), valid: f === frames - 1 ? lastValid : FRAME, prob: probs[f]! })
    }
    return out
  }
}
