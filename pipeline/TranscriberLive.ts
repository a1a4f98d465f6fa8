/**
 * The Transcriber on the real parts: MediaDecoder (streamed) → VoiceActivity → WindowPacker
 * → Whisper, in one pass with bounded memory. Whisper only ever sees speech (packed into
 * ≤30 s windows with short silent gaps), which is the main guard against text hallucinated
 * on silence, music and noise; its own no-speech gate is the second. Window-local times
 * are mapped back to the source, then long passages are cut into cues of at most ~30 s.
 */
import { Effect, Layer, Stream } from "effect"
import { StageClock } from "./StageClock.ts"
import { segmentPhrases } from "./SegmentPhrases.ts"
import type { Segment, Transcript } from "../src/contract/domain/Transcript.ts"
import { MediaDecoder, SAMPLE_RATE } from "./media/MediaDecoder.ts"
import { NoAudioInFile, Transcriber, type TranscribeRequest, TranscriptionFailed } from "./Transcriber.ts"
import { type PackedWindow, packStream, toSourceTime } from "./vad/WindowPacker.ts"
import type { VadSummary } from "./vad/VoiceActivity.ts"
import { VoiceActivity } from "./vad/VoiceActivity.ts"
import { defaultBatchSize } from "./whisper/BatchSize.ts"
import { Whisper } from "./whisper/Whisper.ts"

export interface TranscriberOptions {
  /** Registry name of the Whisper model. */
  readonly model: string
  /** Windows decoded together. */
  readonly batchSize?: number
  readonly encoder?: "fp32" | "q8"
  /** Beam width of the first decoding pass (1 = greedy). */
  readonly beamSize?: number
  /** Prompt sequentially decoded windows with the text before them (Whisper's option). */
  readonly conditionOnPreviousText?: boolean
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
      const batchSize = options.batchSize ?? defaultBatchSize

      const transcribe = Effect.fn("Transcriber.transcribe")(function*(
        request: TranscribeRequest,
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
              : new TranscriptionFailed({ reason: `decoding failed: ${error.reason}`, kind: "media" })
          )
        )

        // Progress (and with it the job's heartbeat) also moves while audio without speech is
        // decoded and scanned: recognition reports only after each batch, and an hour of silence
        // gives it nothing to report. Without this a long silent stretch looked stalled to the
        // watchdog, and a job deleted meanwhile went on decoding until the next batch.
        let progress = 0
        const report = (reachedSeconds: number) => {
          if (expected === undefined || expected <= 0) return onProgress(progress, {})
          progress = Math.max(progress, Math.min(98, 5 + 93 * (reachedSeconds / expected)))
          return onProgress(progress, {})
        }
        let decodedSamples = 0
        let lastReport = performance.now()

        let language: string = request.language
        // The file's text so far, for the next call's prompt when windows are conditioned on it.
        let previousTokens: ReadonlyArray<number> = []
        let detected: string | null = request.language === "auto" ? null : request.language
        const segments: Array<Segment> = []
        let summary: VadSummary | undefined

        const recognise = Effect.fnUntraced(function*(windows: ReadonlyArray<PackedWindow>) {
          if (windows.length === 0) return
          const started = performance.now()
          const result = yield* whisper.transcribe(windows.map((w) => ({ samples: w.samples })), {
            model: options.model,
            language,
            wordTimestamps: request.wordTimestamps,
            batchSize,
            ...(request.prompt === undefined ? {} : { prompt: request.prompt }),
            ...(request.task === undefined ? {} : { task: request.task }),
            ...(options.encoder === undefined ? {} : { encoder: options.encoder }),
            ...(options.beamSize === undefined ? {} : { beamSize: options.beamSize }),
            ...(options.conditionOnPreviousText === undefined ? {} : { conditionOnPreviousText: options.conditionOnPreviousText }),
            previousTokens
          }).pipe(Effect.mapError((error) =>
            new TranscriptionFailed({
              reason: error._tag === "UnsupportedTaskError"
                ? `task=${error.task} needs a multilingual model; ${error.model} is English-only`
                : `speech recognition failed: ${error._tag}`,
              kind: error._tag === "UnsupportedLanguageError" || error._tag === "UnsupportedTaskError" ? "language" : "engine"
            })
          ))
          StageClock.add("recognition (whisper, all)", performance.now() - started)
          // The first batch fixes the language for the rest of the file.
          language = result.language
          detected = result.language
          previousTokens = result.previousTokens
          result.windows.forEach((window, i) => {
            const packed = windows[i]!
            for (const segment of window.segments) {
              const text = segment.text.trim()
              if (text === "") continue
              const start = round2(toSourceTime(packed, segment.start))
              const end = Math.max(start, round2(toSourceTime(packed, segment.end)))
              const words = segment.words?.map((word) => {
                const ws = Math.min(Math.max(round2(toSourceTime(packed, word.start)), start), end)
                return {
                  start: ws,
                  end: Math.min(Math.max(ws, round2(toSourceTime(packed, word.end))), end),
                  text: word.text,
                  ...(word.probability === undefined ? {} : { confidence: Math.round(word.probability * 1000) / 1000 })
                }
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
          lastReport = performance.now()
          yield* report(windows[windows.length - 1]!.sourceEnd)
        })

        // Batches run one after another. Running two at once in this thread (the next batch's
        // encoder during the current one's decoding) was tried and gave nothing: onnxruntime-node
        // runs a session synchronously on the calling thread (inside a setImmediate), so runs of
        // one thread never overlap; only intra-op threads do (bench/README.md, issue 14).
        let pending: Array<PackedWindow> = []
        const scanned = samples.pipe(
          Stream.tap((chunk) => {
            decodedSamples += chunk.length
            if (performance.now() - lastReport < 1_000) return Effect.void
            lastReport = performance.now()
            // With windows waiting for recognition, the audio before them is not done yet.
            return pending.length === 0 ? report(decodedSamples / SAMPLE_RATE) : onProgress(progress, {})
          })
        )
        yield* packStream(vad.events(scanned)).pipe(
          Stream.runForEach((event) => {
            if (event._tag === "Done") {
              summary = event.summary
              const last = pending
              pending = []
              return recognise(last)
            }
            pending.push(event.window)
            if (pending.length < batchSize) return Effect.void
            const batch = pending
            pending = []
            return recognise(batch)
          })
        )

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

