/**
 * Clip rendering on the native `ffmpeg`/`ffprobe` (pipeline/render/ClipRenderer.ts, backend
 * "native"): the server uses it whenever ffmpeg is on PATH, and clips-render.test.ts covers only
 * the WASM build. A karaoke clip of the mp4 sample and a waveform clip of a wav come out as the
 * same 1080×1920 H.264 + AAC mp4 (moov first, duration within 0.1 s) with the karaoke colour
 * where a word is spoken; a source without audio fails RenderFailed. Skipped (with the reason
 * printed) where no ffmpeg is installed, never in CI (test/support/nativeFfmpeg.ts).
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ClipRenderer, type ClipRenderSpec } from "../../pipeline/render/ClipRenderer.ts"
import { nativeFfmpegRuns } from "../support/nativeFfmpeg.ts"
import { mediaDir } from "../support/paths.ts"
import { countPixels, frameAt, readMp4 } from "./support.ts"

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "clip-native-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const render = (spec: Omit<ClipRenderSpec, "outputPath" | "title">, name: string) =>
  Effect.runPromise(Effect.gen(function*() {
    const renderer = yield* ClipRenderer
    expect(renderer.backend).toBe("native")
    const outputPath = path.join(scratch, name)
    const progress: Array<number> = []
    const exit = yield* Effect.exit(renderer.render({ ...spec, outputPath, title: "Budget meeting" }, (fraction) =>
      Effect.sync(() => void progress.push(fraction))))
    return { exit, outputPath, progress }
  }).pipe(Effect.provide(ClipRenderer.layer({ backend: "native" }))))

const expectClipMp4 = (file: string, seconds: number) => {
  const mp4 = readMp4(file)
  expect(mp4.topLevel.indexOf("moov")).toBeGreaterThanOrEqual(0)
  expect(mp4.topLevel.indexOf("moov")).toBeLessThan(mp4.topLevel.indexOf("mdat"))
  expect(mp4.tracks.find((track) => track.handler === "vide")).toMatchObject({ codec: "avc1", width: 1080, height: 1920 })
  expect(mp4.tracks.find((track) => track.handler === "soun")?.codec).toBe("mp4a")
  expect(Math.abs(mp4.durationSeconds - seconds)).toBeLessThanOrEqual(0.1)
}

const isYellow = (r: number, g: number, b: number) => r > 200 && g > 170 && b < 100
/** The caption band at quarter scale (as in clips-render.test.ts). */
const band = [300, 420] as const

describe.runIf(nativeFfmpegRuns("clip rendering (native ffmpeg)"))("clip rendering (native ffmpeg)", () => {
  it("renders the mp4 sample as a karaoke clip with burned-in captions", async () => {
    const { exit, outputPath, progress } = await render({
      inputPath: path.join(mediaDir, "f05_podcast_video.mp4"),
      startSeconds: 1.0,
      durationSeconds: 2.5,
      style: "karaoke",
      words: [{ start: 0.5, end: 0.9, text: "Hello" }, { start: 1.0, end: 1.5, text: "caption" }, { start: 1.6, end: 2.1, text: "world." }]
    }, "karaoke.mp4")
    expect(exit._tag, String(exit)).toBe("Success")
    expect(progress.at(-1)).toBe(1)
    expectClipMp4(outputPath, 2.5)
    // Clip time 1.3 s: "caption" is being spoken.
    expect(countPixels(await frameAt(outputPath, 1.3), band[0], band[1], isYellow)).toBeGreaterThan(40)
    expect(countPixels(await frameAt(outputPath, 0.2), band[0], band[1], isYellow)).toBeLessThan(5)
  }, 120_000)

  it("renders a wav as a waveform clip with line captions", async () => {
    const { exit, outputPath } = await render({
      inputPath: path.join(mediaDir, "a01_slt_budget.wav"),
      startSeconds: 0.5,
      durationSeconds: 2.0,
      style: "line",
      words: [{ start: 0, end: 1.9, text: "Good morning everyone." }]
    }, "wave.mp4")
    expect(exit._tag, String(exit)).toBe("Success")
    expectClipMp4(outputPath, 2.0)
  }, 120_000)

  it("fails RenderFailed for a source without audio, leaving no file", async () => {
    const { exit, outputPath } = await render({
      inputPath: path.join(mediaDir, "x01_video_no_audio.mp4"),
      startSeconds: 0,
      durationSeconds: 1,
      style: "none",
      words: []
    }, "silent.mp4")
    expect(exit._tag).toBe("Failure")
    expect(String(exit)).toContain("RenderFailed")
    expect(fs.existsSync(outputPath)).toBe(false)
  }, 60_000)
})
