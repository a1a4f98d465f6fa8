/**
 * Insights benchmark: extractive generation time for a 10-minute transcript.
 *
 *   npx node bench/insights.ts                 10 minutes, 3 runs (the fastest counts)
 *   npx node bench/insights.ts --minutes 30 --repeat 1
 *
 * The transcript is made of the manifest reference texts of shared/media, cycled until it
 * lasts `--minutes`: the a08 interview turn by turn with its own times and three speaker
 * labels, the a05 dialogue with two, and the single-voice clips at 2.5 words per second, with
 * 0.6 s between clips (≈ 150 words a minute, a normal speaking rate). Times are shifted for each
 * copy. MiniLM (int8) runs on one thread; model load is measured separately.
 *
 * Measured 2026-11-22 on the shared 2-core machine (other work running): 10.8 min / 1,480 words
 * → 0.94–1.4 s (fastest of 3), peak RSS ≈ 200 MB, model load 0.3–0.6 s; 60.6 min / 8,288 words
 * → 9.5 s. The time is mostly MiniLM over each sentence (one run per sentence), so it grows
 * with the number of sentences.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Context, Effect, Layer } from "effect"
import { OnnxRuntime } from "../pipeline/onnx/OnnxRuntime.ts"
import { Embedder } from "../search/Embedder.ts"
import type { Segment, Transcript } from "../src/contract/domain/Transcript.ts"
import { Insights } from "../services/insights/Insights.ts"

const shared = path.resolve(import.meta.dirname, "../../shared")
const arg = (name: string, fallback: number) =>
  process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : fallback
const MINUTES = arg("--minutes", 10)
const REPEAT = Math.max(1, arg("--repeat", 3))
const GAP_S = 0.6
const WORDS_PER_S = 2.5

interface Entry {
  readonly kind: string
  readonly text: string
  readonly turns?: ReadonlyArray<{ speaker: string; text: string; start?: number; end?: number }>
}
const manifest: Record<string, Entry> = JSON.parse(fs.readFileSync(path.join(shared, "media/manifest.json"), "utf8"))

/** One pass over the clips: segments relative to 0, and the pass's length in seconds. */
const onePass = (): { segments: Array<Segment>; length: number } => {
  const segments: Array<Segment> = []
  let at = 0
  const seen = new Set<string>()
  for (const entry of Object.values(manifest)) {
    if ((entry.kind !== "speech" && entry.kind !== "dialogue") || seen.has(entry.text)) continue
    seen.add(entry.text)
    const letters = [...new Set((entry.turns ?? []).map((t) => t.speaker))]
    const turns = entry.turns ?? [{ speaker: "A", text: entry.text }]
    let local = 0
    for (const t of turns) {
      const start = t.start ?? local
      const end = t.end ?? start + t.text.split(/\s+/).length / WORDS_PER_S
      const speaker = `SPEAKER_${String(Math.max(0, letters.indexOf(t.speaker))).padStart(2, "0")}`
      segments.push({ start: at + start, end: at + end, text: t.text, speaker })
      local = end + GAP_S
    }
    at += local + GAP_S
  }
  return { segments, length: at }
}

const buildTranscript = (minutes: number): Transcript => {
  const pass = onePass()
  const segments: Array<Segment> = []
  for (let k = 0; segments.length === 0 || segments.at(-1)!.end < minutes * 60; k++) {
    for (const s of pass.segments) segments.push({ ...s, start: s.start + k * pass.length, end: s.end + k * pass.length })
  }
  return {
    text: segments.map((s) => s.text).join(" "),
    language: "en",
    duration: segments.at(-1)!.end,
    speech_detected: true,
    segments
  }
}

const main = Effect.gen(function*() {
  const transcript = buildTranscript(MINUTES)
  const words = transcript.text.split(/\s+/).length
  const loadStart = performance.now()
  const context = yield* Layer.build(
    Insights.layer().pipe(
      Layer.provide(Embedder.layer({ modelsDir: path.join(shared, "models"), threads: 1 })),
      Layer.provide(OnnxRuntime.layer({ threads: 1, idleUnloadMs: 60_000 }))
    )
  )
  const service = Context.get(context, Insights)
  const loadMs = performance.now() - loadStart
  const times: Array<number> = []
  let last: Effect.Success<ReturnType<typeof service.generate>> | undefined
  for (let r = 0; r < REPEAT; r++) {
    const start = performance.now()
    last = yield* service.generate(transcript)
    times.push(performance.now() - start)
  }
  const best = Math.min(...times) / 1000
  console.log(`transcript: ${(transcript.duration / 60).toFixed(1)} min, ${transcript.segments.length} segments, ${words} words`)
  console.log(`layer build (model load): ${(loadMs / 1000).toFixed(2)} s`)
  console.log(`generation: ${best.toFixed(2)} s fastest of ${REPEAT} (${times.map((t) => (t / 1000).toFixed(2)).join(", ")})`)
  console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`)
  console.log(
    `output: ${last!.summary.sentences.length} summary sentences, ${last!.topics.length} topics ` +
      `(${last!.topics.map((t) => t.phrase).join(", ")}), ${last!.quotes.length} quotes, ${last!.chapters.length} chapters, ` +
      `speakers ${last!.speakers.map((s) => `${s.label}=${s.name ?? "?"}`).join(" ")}`
  )
  if (best > 60) {
    console.error(`over the budget of one minute for ${MINUTES} minutes`)
    process.exitCode = 1
  }
})

Effect.runPromise(Effect.scoped(main)).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
