import { assert, describe, it } from "@effect/vitest"
import { FRAME, SpeechSegmenter, type SpeechRegion } from "../../pipeline/vad/SpeechSegmenter.ts"

const SR = 16_000

/**
 * Batch reference: silero-vad get_speech_timestamps (max_speech_duration_s = inf) written from
 * its documented rules, over precomputed probabilities. Returns [start, end] samples.
 */
const reference = (probs: ReadonlyArray<number>, total: number, pad = 480) => {
  const threshold = 0.5
  const neg = 0.35
  const minSpeech = 0.25 * SR
  const minSilence = 0.1 * SR
  let triggered = false
  let tempEnd = 0
  let start = 0
  const speeches: Array<[number, number]> = []
  probs.forEach((p, i) => {
    const cur = FRAME * i
    if (p >= threshold && tempEnd) tempEnd = 0
    if (p >= threshold && !triggered) {
      triggered = true
      start = cur
      return
    }
    if (p < neg && triggered) {
      if (!tempEnd) tempEnd = cur
      if (cur - tempEnd < minSilence) return
      if (tempEnd - start > minSpeech) speeches.push([start, tempEnd])
      triggered = false
      tempEnd = 0
    }
  })
  if (triggered && total - start > minSpeech) speeches.push([start, total])
  for (let i = 0; i < speeches.length; i++) {
    const s = speeches[i]!
    if (i === 0) s[0] = Math.max(0, s[0] - pad)
    const next = speeches[i + 1]
    if (next) {
      const silence = next[0] - s[1]
      if (silence < 2 * pad) {
        s[1] += Math.floor(silence / 2)
        next[0] = Math.max(0, next[0] - Math.floor(silence / 2))
      } else {
        s[1] = Math.min(total, s[1] + pad)
        next[0] = Math.max(0, next[0] - pad)
      }
    } else {
      s[1] = Math.min(total, s[1] + pad)
    }
  }
  return speeches
}

/** Deterministic pseudo-random generator (mulberry32). */
const rng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** Speech-like probability runs: alternating bursts and pauses of random lengths, noisy values. */
const probabilityTrack = (seed: number, frames: number) => {
  const r = rng(seed)
  const probs: Array<number> = []
  let speaking = r() < 0.5
  while (probs.length < frames) {
    const run = 1 + Math.floor(r() * (speaking ? 120 : 40))
    for (let k = 0; k < run && probs.length < frames; k++) {
      probs.push(speaking ? 0.3 + r() * 0.7 : r() * 0.45)
    }
    speaking = !speaking
  }
  return probs
}

const run = (probs: ReadonlyArray<number>, total: number, maxRegionSeconds = 1e9) => {
  const seg = new SpeechSegmenter({ maxRegionSeconds })
  const samples = new Float32Array(total)
  for (let i = 0; i < total; i++) samples[i] = (i % 977) / 977
  const regions: Array<SpeechRegion> = []
  probs.forEach((p, i) => {
    const from = i * FRAME
    const valid = Math.min(FRAME, total - from)
    const frame = new Float32Array(FRAME)
    frame.set(samples.subarray(from, from + valid))
    regions.push(...seg.push(frame, valid, p))
  })
  regions.push(...seg.finish())
  return { regions, samples, seg }
}

describe("SpeechSegmenter", () => {
  it("matches the batch get_speech_timestamps rules on 200 random probability tracks", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const frames = 50 + (seed * 37) % 900
      const total = frames * FRAME - (seed % 500)
      const probs = probabilityTrack(seed, frames)
      const { regions, samples } = run(probs, total)
      const expected = reference(probs, total)
      assert.deepStrictEqual(regions.map((r) => [r.startSample, r.endSample]), expected, `seed ${seed}`)
      for (const r of regions) {
        assert.isFalse(r.continues)
        assert.deepStrictEqual(r.samples, samples.slice(r.startSample, r.endSample))
      }
    }
  })

  it("no speech → no region; all speech → one region covering everything", () => {
    assert.deepStrictEqual(run(new Array(300).fill(0.1), 300 * FRAME).regions, [])
    const all = run(new Array(300).fill(0.99), 300 * FRAME)
    assert.deepStrictEqual(all.regions.map((r) => [r.startSample, r.endSample]), [[0, 300 * FRAME]])
    assert.strictEqual(all.seg.coveredSamples, 300 * FRAME)
  })

  it("bounded regions: a 95 s passage is cut at low-probability frames into contiguous pieces ≤ 29 s", () => {
    const frames = Math.ceil((95 * SR) / FRAME)
    const probs = new Array<number>(frames).fill(0.95)
    const dipAt = Math.floor((20 * SR) / FRAME)
    probs[dipAt] = 0.45 // not a pause (above negThreshold), but the lowest point of the first span
    const { regions, samples } = run(probs, frames * FRAME, 29)
    assert.isAtLeast(regions.length, 4)
    for (let k = 0; k < regions.length; k++) {
      const r = regions[k]!
      assert.isAtMost(r.endSample - r.startSample, 29 * SR)
      assert.deepStrictEqual(r.samples, samples.slice(r.startSample, r.endSample))
      if (k > 0) assert.strictEqual(r.startSample, regions[k - 1]!.endSample)
      assert.strictEqual(r.continues, k < regions.length - 1)
    }
    assert.strictEqual(regions[0]!.endSample, dipAt * FRAME + FRAME / 2)
    assert.strictEqual(regions[regions.length - 1]!.endSample, frames * FRAME)
  })

  it("bounded regions: a long passage with an open silence is ended at that silence", () => {
    const frames = Math.ceil((40 * SR) / FRAME)
    const probs = new Array<number>(frames).fill(0.95)
    // 20 s in: 3 frames below negThreshold (96 ms < min silence), then a long mid-probability stretch.
    const at = Math.floor((20 * SR) / FRAME)
    for (let f = at; f < at + 3; f++) probs[f] = 0.1
    for (let f = at + 3; f < frames; f++) probs[f] = 0.4
    const { regions } = run(probs, frames * FRAME, 29)
    assert.strictEqual(regions[0]!.continues, false)
    assert.strictEqual(regions[0]!.endSample, at * FRAME + 480)
  })
})
