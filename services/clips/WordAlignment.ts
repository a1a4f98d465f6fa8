/**
 * Word times for a clip whose job was transcribed without `word_timestamps`, computed on
 * demand: the clip's stretch (plus one second either side) is decoded, written as a 16 kHz
 * WAV and transcribed again with word timestamps (Whisper's cross-attention alignment), and
 * the transcript's own words — which may have been corrected since — are matched to the
 * recognised ones in order (an edit-distance alignment over lower-cased letters and
 * digits). A matched word takes the recognised word's times; an unmatched one keeps its
 * estimate (characters shared out over its phrase, see ClipWords). When recognition fails
 * or finds nothing, every word keeps its estimate. Stored word times are used as they are.
 */
import { Cause, Context, Effect, Layer, Option, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { MediaDecoder, SAMPLE_RATE } from "../../pipeline/media/MediaDecoder.ts"
import { pcm16Wav } from "../../pipeline/media/Wav.ts"
import type { TimedWord } from "../../pipeline/render/CaptionScript.ts"
import { Transcriber } from "../../pipeline/Transcriber.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { clipWords } from "./ClipWords.ts"

export type WordTimesSource = "stored" | "aligned" | "estimated"

const paddingSeconds = 1

const normal = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "")

/** Index pairs (a, b) of equal words on a cheapest edit path between `a` and `b`. */
export const matchWords = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<readonly [number, number]> => {
  const cols = b.length + 1
  const cost = new Uint32Array((a.length + 1) * cols)
  for (let i = 0; i <= a.length; i++) cost[i * cols] = i
  for (let j = 0; j <= b.length; j++) cost[j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const same = a[i - 1] === b[j - 1] && a[i - 1] !== ""
      cost[i * cols + j] = Math.min(
        cost[(i - 1) * cols + j - 1]! + (same ? 0 : 1),
        cost[(i - 1) * cols + j]! + 1,
        cost[i * cols + j - 1]! + 1
      )
    }
  }
  const pairs: Array<readonly [number, number]> = []
  let i = a.length
  let j = b.length
  while (i > 0 && j > 0) {
    const same = a[i - 1] === b[j - 1] && a[i - 1] !== ""
    if (same && cost[i * cols + j] === cost[(i - 1) * cols + j - 1]) {
      pairs.push([i - 1, j - 1])
      i--
      j--
    } else if (cost[i * cols + j] === cost[(i - 1) * cols + j - 1]! + 1) {
      i--
      j--
    } else if (cost[i * cols + j] === cost[(i - 1) * cols + j]! + 1) i--
    else j--
  }
  return pairs.reverse()
}

/** `estimated` words with the times of the `recognised` words they match. */
export const alignTimes = (estimated: ReadonlyArray<TimedWord>, recognised: ReadonlyArray<TimedWord>) => {
  const out = estimated.map((word) => ({ ...word }))
  const pairs = matchWords(estimated.map((w) => normal(w.text)), recognised.map((w) => normal(w.text)))
  for (const [i, j] of pairs) {
    out[i] = { text: estimated[i]!.text, start: recognised[j]!.start, end: recognised[j]!.end }
  }
  return { words: out, matched: pairs.length }
}

export class WordAlignment extends Context.Service<WordAlignment, {
  /** The clip's words with times from its start, and where the times came from. */
  clipWords(
    sourcePath: string,
    transcript: Transcript,
    startS: number,
    endS: number
  ): Effect.Effect<{ readonly words: ReadonlyArray<TimedWord>; readonly source: WordTimesSource }>
}>()("verbatim/clips/WordAlignment") {
  static readonly layer = Layer.effect(
    WordAlignment,
    Effect.gen(function*() {
      const decoder = yield* MediaDecoder
      const transcriber = yield* Transcriber

      /** Samples of [from, to) seconds of the source; decoding stops once past `to`. */
      const stretch = (sourcePath: string, from: number, to: number) =>
        Effect.gen(function*() {
          const first = Math.floor(from * SAMPLE_RATE)
          const last = Math.ceil(to * SAMPLE_RATE)
          const out = new Float32Array(Math.max(0, last - first))
          let position = 0
          yield* decoder.decode(sourcePath).pipe(
            Stream.takeWhile(() => position < last),
            Stream.runForEach((chunk) =>
              Effect.sync(() => {
                const begin = Math.max(first, position)
                const end = Math.min(last, position + chunk.length)
                if (end > begin) out.set(chunk.subarray(begin - position, end - position), begin - first)
                position += chunk.length
              })
            )
          )
          return out.subarray(0, Math.max(0, Math.min(last, position) - first))
        })

      const recognise = (sourcePath: string, language: string | null, from: number, to: number) =>
        Effect.acquireUseRelease(
          Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-align-"))),
          (dir) =>
            Effect.gen(function*() {
              const samples = yield* stretch(sourcePath, from, to)
              const file = path.join(dir, "stretch.wav")
              fs.writeFileSync(file, pcm16Wav(samples, SAMPLE_RATE))
              const result = yield* transcriber.transcribe(
                { path: file, language: language ?? "auto", wordTimestamps: true },
                () => Effect.void
              )
              return result.transcript.segments.flatMap((segment) => segment.words ?? [])
            }),
          (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
        )

      const words = Effect.fn("WordAlignment.clipWords")(function*(
        sourcePath: string,
        transcript: Transcript,
        startS: number,
        endS: number
      ) {
        const estimated = clipWords(transcript, startS, endS)
        const inside = transcript.segments.filter((s) => s.end > startS && s.start < endS)
        if (inside.every((segment) => segment.words !== undefined && segment.words.length > 0)) {
          return { words: estimated, source: "stored" as const }
        }
        const from = Math.max(0, startS - paddingSeconds)
        const recognised = yield* recognise(sourcePath, transcript.language, from, endS + paddingSeconds).pipe(
          Effect.map(Option.some),
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause)
              ? Effect.interrupt
              : Effect.as(Effect.logWarning("word alignment failed; estimating word times", cause), Option.none())
          )
        )
        if (Option.isNone(recognised) || recognised.value.length === 0) return { words: estimated, source: "estimated" as const }
        // Recognised times are from the stretch's start; captions count from the clip's.
        const length = endS - startS
        const clamp = (t: number) => Math.max(0, Math.min(length, t))
        const shifted = recognised.value.map((w) => ({
          text: w.text,
          start: clamp(w.start + from - startS),
          end: clamp(w.end + from - startS)
        }))
        const aligned = alignTimes(estimated, shifted)
        return aligned.matched === 0
          ? { words: estimated, source: "estimated" as const }
          : { words: aligned.words, source: "aligned" as const }
      })

      return WordAlignment.of({ clipWords: words })
    })
  )
}
