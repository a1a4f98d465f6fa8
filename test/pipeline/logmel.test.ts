import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { makeLogMelExtractor, N_FRAMES } from "../../pipeline/whisper/LogMel.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { readWavPcm16 } from "../support/wav.ts"

describe("LogMel", () => {
  it("matches the WhisperFeatureExtractor fixture for a01 within 2e-5", () => {
    const { sampleRate, samples } = readWavPcm16(path.join(mediaDir, "a01_slt_budget.wav"))
    expect(sampleRate).toBe(16000)
    expect(samples.length).toBe(112800)
    const raw = fs.readFileSync(path.join(modelsDir, "fixtures/a01_logmel_80x3000.f32"))
    const expected = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4)
    const out = new Float32Array(80 * N_FRAMES)
    const mel = makeLogMelExtractor(80)
    mel.compute(samples, out)
    let maxAbs = 0
    for (let i = 0; i < out.length; i++) maxAbs = Math.max(maxAbs, Math.abs(out[i]! - expected[i]!))
    expect(maxAbs).toBeLessThan(2.5e-5)
  })

  it("writes at an offset (batch slot) and leaves other slots untouched", () => {
    const { samples } = readWavPcm16(path.join(mediaDir, "a01_slt_budget.wav"))
    const mel = makeLogMelExtractor(80)
    const single = new Float32Array(80 * N_FRAMES)
    mel.compute(samples, single)
    const batch = new Float32Array(2 * 80 * N_FRAMES).fill(123)
    mel.compute(samples, batch, 80 * N_FRAMES)
    expect(batch[0]).toBe(123)
    expect(batch.subarray(80 * N_FRAMES)).toEqual(single)
  })

  it("computes 30 s of audio in well under a second", () => {
    const mel = makeLogMelExtractor(80)
    const samples = new Float32Array(480000).map((_, i) => Math.sin(i * 0.01) * 0.1)
    const out = new Float32Array(80 * N_FRAMES)
    const t0 = performance.now()
    mel.compute(samples, out)
    expect(performance.now() - t0).toBeLessThan(1000)
  })
})

describe("FFT", () => {
  it("real FFT of size 400 equals a direct DFT", async () => {
    const { makeRealFftPlan } = await import("../../pipeline/whisper/Fft.ts")
    const n = 400
    const x = Float64Array.from({ length: n }, (_, i) => Math.sin(i * 0.37) + 0.5 * Math.cos(i * 1.91) + (i % 7) / 10)
    const re = new Float64Array(n / 2 + 1)
    const im = new Float64Array(n / 2 + 1)
    makeRealFftPlan(n).forward(x, re, im)
    let maxErr = 0
    for (let k = 0; k <= n / 2; k++) {
      let sr = 0
      let si = 0
      for (let j = 0; j < n; j++) {
        sr += x[j]! * Math.cos((-2 * Math.PI * k * j) / n)
        si += x[j]! * Math.sin((-2 * Math.PI * k * j) / n)
      }
      maxErr = Math.max(maxErr, Math.abs(sr - re[k]!), Math.abs(si - im[k]!))
    }
    expect(maxErr).toBeLessThan(1e-9)
  })
})
