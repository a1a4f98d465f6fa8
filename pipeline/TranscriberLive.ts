/**
 * The Transcriber on the real parts: MediaDecoder (streamed) → VoiceActivity → WindowPacker
 * → Whisper, in one pass with bounded memory. Whisper only ever sees speech (packed into
 * ≤30 s windows with short silent gaps), which is the main guard against text hallucinated
 * on silence, music and noise; its own no-speech gate is the second. Window-local times
 * are mapped back to the source, then long passages are cut into cues of at most ~30 s.
 */
import { Effect, Fiber, Layer, Stream } from "effect"
import { StageClock } from "./StageClock.ts"
import { segmentPhrases } from "./SegmentPhrases.ts"
import type { Segment, Transcript } from "../src/contract/domain/Transcript.ts"
import { MediaDecoder, SAMPLE_RATE } from "./media/MediaDecoder.ts"
import { NoAudioInFile, Transcriber, TranscriptionFailed } from "./Transcriber.ts"
import { type PackedWindow, packStream, toSourceTime } from "./vad/WindowPacker.ts"
import type { VadSummary } from "./vad/VoiceActivity.ts"
import { VoiceActivity } from "./vad/VoiceActivity.ts"
import { Whisper } from "./whisper/Whisper.ts"

export interface TranscriberOptions {
  /** Registry name of the Whisper model. */
  readonly model: string
  /** Windows decoded together. */
  readonly batchSize?: number
  readonly encoder?: "fp32" | "q8"
  /** Beam width of the first decoding pass (1 = greedy). */
  readonly beamSize?: number
}

const round2 = (x: number) => Math.round(x * 100) / 100

/** Cuts a stream of decoded chunks after `maxSeconds` of audio. */
const limitSeconds = <E, R>(samples: Stream.Stream<Float32Array, E, R>, maxSeconds: number | undefined) => {
  if (maxSeconds === undefined) return samples
  let remaining = Math.floor(maxSeconds * SAMPLE_RATE)
  return samples.pipe(
    Stream.takeWhile(() => remaining > 0),
    Stream.map((chunk) => {
      const kept = chunk.length <= remaining ? chunk : chunk.subarray(0, remaining)
      remaining -= kept.length
      return kept
    })
  )
}

export const TranscriberLive = (options: TranscriberOptions) =>
  Layer.effect(
    Transcriber,
    Effect.gen(function*() {
      const decoder = yield* MediaDecoder
      const vad = yield* VoiceActivity
      const whisper = yield* Whisper
      const batchSize = options.batchSize ?? 4

      const transcribe = Effect.fn("Transcriber.transcribe")(function*(
        request: { readonly path: string; readonly language: string; readonly wordTimestamps: boolean; readonly maxSeconds?: number | undefined },
        onProgress: (progress: number, facts: { readonly durationSeconds?: number }) => Effect.Effect<void>
      ) {
        const probe = yield* decoder.probe(request.path)
        const knownDuration = probe.durationSeconds ?? undefined
        const expected = request.maxSeconds === undefined || knownDuration === undefined
          ? knownDuration
          : Math.min(knownDuration, request.maxSeconds)
        if (knownDuration !== undefined) yield* onProgress(2, { durationSeconds: knownDuration })

        const samples = limitSeconds(decoder.decode(request.path), request.maxSeconds).pipe(
          Stream.mapError((error) =>
            error._tag === "NoAudio"
              ? new NoAudioInFile({ reason: error.reason })
              : new TranscriptionFailed({ reason: `decoding failed: ${error.reason}` })
          )
        )

        let language: string = request.language
        let detected: string | null = request.language === "auto" ? null : request.language
        const segments: Array<Segment> = []
        let summary: VadSummary | undefined

        /** Whisper over one batch of windows; nothing shared is touched until `apply`. */
        const recognise = Effect.fnUntraced(function*(windows: ReadonlyArray<PackedWindow>) {
          const started = performance.now()
          const result = yield* whisper.transcribe(windows.map((w) => ({ samples: w.samples })), {
            model: options.model,
            language,
            wordTimestamps: request.wordTimestamps,
            batchSize,
            ...(options.encoder === undefined ? {} : { encoder: options.encoder }),
            ...(options.beamSize === undefined ? {} : { beamSize: options.beamSize })
          }).pipe(Effect.mapError((error) => new TranscriptionFailed({ reason: `speech recognition failed: ${error._tag}` })))
          StageClock.add("recognition (whisper, all)", performance.now() - started)
          return { windows, result }
        })

        /** A finished batch's segments in source time, in file order (batches are applied in order). */
        const apply = Effect.fnUntraced(function*({ windows, result }: Effect.Success<ReturnType<typeof recognise>>) {
          // The first batch fixes the language for the rest of the file.
          language = result.language
          detected = result.language
          result.windows.forEach((window, i) => {
            const packed = windows[i]!
            for (const segment of window.segments) {
              const text = segment.text.trim()
              if (text === "") continue
              const start = round2(toSourceTime(packed, segment.start))
              const end = Math.max(start, round2(toSourceTime(packed, segment.end)))
              const words = segment.words?.map((word) => {
                const ws = Math.min(Math.max(round2(toSourceTime(packed, word.start)), start), end)
                return { start: ws, end: Math.min(Math.max(ws, round2(toSourceTime(packed, word.end))), end), text: word.text }
              })
              segments.push({
                start,
                end,
                text,
                speaker: null,
                ...(request.wordTimestamps && words !== undefined ? { words } : {})
              })
            }
          })
          const reached = windows[windows.length - 1]!.sourceEnd
          if (expected !== undefined && expected > 0) {
            yield* onProgress(Math.min(98, 5 + 93 * (reached / expected)), {})
          }
        })

        // Two batches in flight once the language is known: the encoder of the next batch (large
        // matrices, both cores busy) runs while the current one decodes token by token (small
        // matrices and JS between steps, which leave a core idle). Batches are applied in order;
        // the child fiber is interrupted with this one.
        let inFlight: Fiber.Fiber<Effect.Success<ReturnType<typeof recognise>>, TranscriptionFailed> | undefined
        const settle = Effect.gen(function*() {
          if (inFlight === undefined) return
          const fiber = inFlight
          inFlight = undefined
          yield* apply(yield* Fiber.join(fiber))
        })
        const submit = Effect.fnUntraced(function*(windows: ReadonlyArray<PackedWindow>) {
          if (windows.length === 0) return
          if (detected === null && inFlight === undefined) return yield* apply(yield* recognise(windows))
          const next = yield* Effect.forkChild(recognise(windows))
          yield* settle
          inFlight = next
        })

        let pending: Array<PackedWindow> = []
        // The buffer lets decoding and voice activity run ahead while Whisper works on the
        // previous batch (they wait on onnxruntime and the WASM decoder, not on this fiber), so
        // the one-thread VAD fills the gaps between Whisper's steps instead of adding to the wall.
        yield* packStream(vad.events(samples)).pipe(
          Stream.buffer({ capacity: 2 * batchSize }),
          Stream.runForEach((event) => {
            if (event._tag === "Done") {
              summary = event.summary
              const last = pending
              pending = []
              return submit(last)
            }
            pending.push(event.window)
            // Until the language is known the first window goes alone: Whisper detects the
            // language on it, and every later batch can then overlap with the one before.
            if (pending.length < (detected === null && inFlight === undefined ? 1 : batchSize)) return Effect.void
            const batch = pending
            pending = []
            return submit(batch)
          })
        )
        yield* settle

        const vadSummary = summary ?? { duration: 0, speechRatio: 0, speechDetected: false, regions: [] }
        const phrases = segmentPhrases(segments)
        const speechDetected = vadSummary.speechDetected && phrases.length > 0
        const transcript: Transcript = {
          text: phrases.map((s) => s.text).join(" "),
          language: speechDetected ? detected : null,
          duration: round2(vadSummary.duration),
          speech_detected: speechDetected,
          segments: speechDetected ? phrases : []
        }
        return {
          transcript,
          durationSeconds: round2(knownDuration ?? vadSummary.duration),
          language: transcript.language,
          speechDetected,
          speechRatio: Math.round(vadSummary.speechRatio * 1000) / 1000
        }
      })

      return Transcriber.of({ transcribe })
    })
  )

