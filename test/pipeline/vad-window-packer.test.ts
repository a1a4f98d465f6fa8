import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as path from "node:path"
import { MediaDecoder } from "../../pipeline/media/MediaDecoder.ts"
import { VoiceActivity, type VadEvent } from "../../pipeline/vad/VoiceActivity.ts"
import {
  packStream,
  defaultPackerOptions,
  packWindows,
  type PackedWindow,
  type PackInput,
  toSourceTime
} from "../../pipeline/vad/WindowPacker.ts"

const SR = 16_000
const media = path.resolve(import.meta.dirname, "../../../shared/media")

/** A region whose sample values encode their own source index, so copies can be checked exactly. */
const region = (startSec: number, endSec: number, extra: Partial<PackInput> = {}): PackInput => {
  const startSample = Math.round(startSec * SR)
  const endSample = Math.round(endSec * SR)
  const samples = new Float32Array(endSample - startSample)
  for (let i = 0; i < samples.length; i++) samples[i] = ((startSample + i) % 1000) / 1000 + 0.0005
  return { startSample, endSample, samples, ...extra }
}

/** Source sample index encoded by a window sample (see `region`), or -1 in a gap. */
const sourceIndexAt = (w: PackedWindow, windowSample: number): number => {
  const t = windowSample / SR
  for (const p of w.pieces) {
    if (t >= p.windowStart - 1e-9 && t < p.windowStart + p.duration - 1e-9) {
      return Math.round((p.sourceStart + (t - p.windowStart)) * SR)
    }
  }
  return -1
}

const checkWindowSamples = (w: PackedWindow) => {
  for (let i = 0; i < w.samples.length; i += 97) {
    const src = sourceIndexAt(w, i)
    if (src < 0) assert.strictEqual(w.samples[i], 0, `gap sample ${i} of window ${w.index}`)
    else assert.approximately(w.samples[i]!, (src % 1000) / 1000 + 0.0005, 1e-6, `window ${w.index} sample ${i}`)
  }
}

const totalPieceSeconds = (windows: ReadonlyArray<PackedWindow>) =>
  windows.reduce((s, w) => s + w.pieces.reduce((a, p) => a + p.duration, 0), 0)

describe("WindowPacker", () => {
  it("packs short regions into one window with silent gaps and exact samples", () => {
    const regions = [region(1, 3), region(5, 7.5), region(10, 11)]
    const windows = packWindows(regions, { gapSeconds: 0.3 })
    assert.strictEqual(windows.length, 1)
    const w = windows[0]!
    assert.approximately(w.samples.length / SR, 2 + 2.5 + 1 + 2 * 0.3, 1e-9)
    assert.deepStrictEqual(
      w.pieces.map((p) => [p.windowStart, p.sourceStart, p.duration]),
      [[0, 1, 2], [2.3, 5, 2.5], [5.1, 10, 1]]
    )
    assert.strictEqual(w.sourceStart, 1)
    assert.strictEqual(w.sourceEnd, 11)
    assert.approximately(w.speechSeconds, 5.5, 1e-9)
    checkWindowSamples(w)
    // Gap samples are digital silence.
    for (let i = 2 * SR; i < 2.3 * SR; i++) assert.strictEqual(w.samples[i], 0)
  })

  it("toSourceTime: linear inside pieces, nearest edge inside gaps, clamped outside", () => {
    const [w] = packWindows([region(1, 3), region(5, 7.5), region(10, 11)], { gapSeconds: 0.3 })
    assert.approximately(toSourceTime(w!, 0), 1, 1e-9)
    assert.approximately(toSourceTime(w!, 1.25), 2.25, 1e-9)
    assert.approximately(toSourceTime(w!, 2), 3, 1e-9)
    assert.approximately(toSourceTime(w!, 2.1), 3, 1e-9) // nearer to the end of piece 1
    assert.approximately(toSourceTime(w!, 2.2), 5, 1e-9) // nearer to the start of piece 2
    assert.approximately(toSourceTime(w!, 2.3), 5, 1e-9)
    assert.approximately(toSourceTime(w!, 3.3), 6, 1e-9)
    assert.approximately(toSourceTime(w!, 5.6), 10.5, 1e-9)
    assert.approximately(toSourceTime(w!, 6.1), 11, 1e-9)
    assert.approximately(toSourceTime(w!, 29), 11, 1e-9)
    assert.approximately(toSourceTime(w!, -1), 1, 1e-9)
    let previous = -Infinity
    for (let t = -0.5; t < 7; t += 0.01) {
      const s = toSourceTime(w!, t)
      assert.isAtLeast(s, previous - 1e-9)
      previous = s
    }
  })

  it("never exceeds the window length (27 s); starts a new window when the next region does not fit; keeps order", () => {
    const regions: Array<PackInput> = []
    let t = 0
    for (let k = 0; k < 40; k++) {
      const len = 1 + ((k * 7) % 9) // 1..9 s
      regions.push(region(t, t + len))
      t += len + 0.5 + (k % 3)
    }
    const windows = packWindows(regions)
    assert.isAbove(windows.length, 5)
    let lastSource = -1
    const max = defaultPackerOptions.maxWindowSeconds
    assert.strictEqual(max, 27)
    for (const w of windows) {
      assert.isAtMost(w.samples.length, max * SR)
      assert.isAtLeast(w.sourceStart, lastSource)
      lastSource = w.sourceEnd
      checkWindowSamples(w)
    }
    // Every region lands whole in exactly one window.
    assert.strictEqual(windows.reduce((n, w) => n + w.pieces.length, 0), regions.length)
    assert.approximately(
      totalPieceSeconds(windows),
      regions.reduce((s, r) => s + (r.endSample - r.startSample) / SR, 0),
      1e-6
    )
    // Greedy: a window is closed only when the next region would not have fitted.
    for (let k = 0; k + 1 < windows.length; k++) {
      const next = windows[k + 1]!.pieces[0]!.duration
      assert.isAbove(windows[k]!.samples.length / SR + 0.3 + next, max)
    }
  })

  it("splits a 70 s region at its lowest-probability frames, cleanly (no overlap, nothing lost)", () => {
    const long = region(2, 72)
    const firstFrame = Math.floor(long.startSample / 512)
    const frames = Math.ceil(long.endSample / 512) - firstFrame
    const probs = new Float32Array(frames).fill(0.9)
    const dip = (sec: number) => Math.floor((sec * SR) / 512) - firstFrame
    probs[dip(22)] = 0.1 // inside (17, 32]: the first cut
    probs[dip(45)] = 0.2 // inside (22+15, 22+30]: the second cut
    const windows = packWindows([{ ...long, probs, firstFrame }])
    assert.strictEqual(windows.length, 3)
    assert.approximately(windows[0]!.sourceEnd, 22, 0.04)
    assert.approximately(windows[1]!.sourceEnd, 45, 0.04)
    assert.strictEqual(windows[0]!.sourceEnd, windows[1]!.sourceStart)
    assert.strictEqual(windows[1]!.sourceEnd, windows[2]!.sourceStart)
    assert.strictEqual(windows[2]!.sourceEnd, 72)
    const joined = windows.flatMap((w) => Array.from(w.samples))
    assert.strictEqual(joined.length, long.samples.length)
    assert.deepStrictEqual(Float32Array.from(joined), long.samples)
  })

  it("without probabilities splits a long region at its quietest frame, each piece ≤ 30 s", () => {
    const long = region(0, 64)
    const quiet = Math.round(24 * SR)
    for (let i = quiet; i < quiet + 2048; i++) long.samples[i] = 0
    const windows = packWindows([long])
    assert.isAtLeast(windows.length, 3)
    assert.approximately(windows[0]!.sourceEnd, 24, 0.1)
    for (const w of windows) assert.isAtMost(w.samples.length, 30 * SR)
    assert.strictEqual(windows.reduce((n, w) => n + w.samples.length, 0), long.samples.length)
  })

  it("a region flagged `continues` is joined to the next without a gap", () => {
    const a = region(0, 10, { continues: true })
    const b = region(10, 15)
    const [w] = packWindows([a, b])
    assert.strictEqual(w!.pieces.length, 1)
    assert.strictEqual(w!.samples.length, 15 * SR)
    assert.approximately(toSourceTime(w!, 12.5), 12.5, 1e-9)
  })

  it.effect("streaming form gives the same windows as the pure form, before the stream ends", () =>
    Effect.gen(function*() {
      const regions: Array<PackInput> = []
      for (let k = 0; k < 30; k++) regions.push(region(k * 6, k * 6 + 4.5))
      const expected = packWindows(regions)
      const events: Array<VadEvent> = regions.map((r) => ({
        _tag: "Region",
        region: { ...r, probs: new Float32Array(0), firstFrame: 0, continues: false }
      }))
      const summary = { duration: 180, speechRatio: 0.75, speechDetected: true, regions: [] }
      const out = yield* Stream.runCollect(
        packStream(Stream.concat(Stream.fromIterable(events), Stream.succeed<VadEvent>({ _tag: "Done", summary })))
      )
      const windows = out.flatMap((e) => (e._tag === "Window" ? [e.window] : []))
      assert.strictEqual(windows.length, expected.length)
      for (let k = 0; k < windows.length; k++) {
        assert.deepStrictEqual(windows[k]!.pieces, expected[k]!.pieces)
        assert.deepStrictEqual(windows[k]!.samples, expected[k]!.samples)
      }
      const done = out[out.length - 1]!
      assert.strictEqual(done._tag, "Done")
      if (done._tag === "Done") {
        assert.strictEqual(done.windows, expected.length)
        assert.strictEqual(done.summary.speechRatio, 0.75)
      }
      // The first window is available after a handful of regions, without the rest of the stream.
      const first = yield* Stream.runHead(packStream(Stream.concat(Stream.fromIterable(events), Stream.never)))
      assert.strictEqual(first._tag, "Some")
    }))
})

describe("decode → VAD → windows on real media", () => {
  it.layer(Layer.mergeAll(VoiceActivity.layer(), MediaDecoder.layer({ backend: "wasm" })))((it) => {
    it.effect("a05 dialogue: one window holding every region; map back to the source", () =>
      Effect.gen(function*() {
        const vad = yield* VoiceActivity
        const decoder = yield* MediaDecoder
        const out = yield* Stream.runCollect(
          packStream(vad.events(decoder.decode(path.join(media, "a05_dialogue_slt_kal.wav"))))
        )
        const windows = out.flatMap((e) => (e._tag === "Window" ? [e.window] : []))
        const done = out[out.length - 1]!
        assert.strictEqual(done._tag, "Done")
        if (done._tag !== "Done") return
        assert.strictEqual(windows.length, 1)
        const w = windows[0]!
        assert.strictEqual(w.pieces.length, done.summary.regions.length)
        assert.approximately(toSourceTime(w, 0), done.summary.regions[0]!.start, 0.001)
        assert.approximately(
          toSourceTime(w, w.samples.length / SR),
          done.summary.regions[done.summary.regions.length - 1]!.end,
          0.001
        )
        assert.approximately(w.speechSeconds / done.summary.duration, done.summary.speechRatio, 0.001)
      }))

    it.effect("n01 silence: no window, Done says no speech", () =>
      Effect.gen(function*() {
        const vad = yield* VoiceActivity
        const decoder = yield* MediaDecoder
        const out = yield* Stream.runCollect(packStream(vad.events(decoder.decode(path.join(media, "n01_silence.wav")))))
        assert.strictEqual(out.length, 1)
        const done = out[0]!
        assert.isTrue(done._tag === "Done" && !done.summary.speechDetected && done.windows === 0)
      }))
  })
})
