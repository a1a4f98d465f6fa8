/**
 * Diarization of a media file in one call: decode → voice activity (speech regions) → Diarizer.
 * This is what the `Diarize` operation of the pipeline worker runs, and what the job's `diarize`
 * task asks for after transcription.
 *
 * The whole recording is held as 16 kHz float PCM while it is diarized (the Diarizer measures the
 * volume over all speech regions before embedding): 230 MB per hour of audio. `maxSeconds` limits
 * it to the opening of the recording, as the transcription of a keyless preview is.
 *
 * Every failure is `DiarizationFailed` (a file that does not decode, a missing voice encoder, an
 * ONNX error): the caller completes the transcript without speakers.
 */
import { Context, Effect, Layer, Stream } from "effect"
import { MediaDecoder, SAMPLE_RATE } from "../media/MediaDecoder.ts"
import { VoiceActivity } from "../vad/VoiceActivity.ts"
import { DiarizationFailed, Diarizer, type SpeakerTurn } from "./Diarizer.ts"

export interface DiarizeFileRequest {
  readonly path: string
  readonly maxSeconds?: number | undefined
  /** Speaker hints: the number of speakers found is kept within [min, max] (see `averageLinkage`). */
  readonly minSpeakers?: number | undefined
  readonly maxSpeakers?: number | undefined
}

export class FileDiarizer extends Context.Service<FileDiarizer, {
  diarizeFile(request: DiarizeFileRequest): Effect.Effect<Array<SpeakerTurn>, DiarizationFailed>
}>()("verbatim/pipeline/FileDiarizer") {
  /** Needs MediaDecoder, VoiceActivity and Diarizer. */
  static readonly layer = Layer.effect(
    FileDiarizer,
    Effect.gen(function*() {
      const decoder = yield* MediaDecoder
      const vad = yield* VoiceActivity
      const diarizer = yield* Diarizer

      const diarizeFile = Effect.fn("FileDiarizer.diarizeFile")(function*(request: DiarizeFileRequest) {
        const limit = request.maxSeconds === undefined ? Infinity : Math.floor(request.maxSeconds * SAMPLE_RATE)
        const chunks: Array<Float32Array> = []
        let length = 0
        yield* decoder.decode(request.path).pipe(
          Stream.takeWhile(() => length < limit),
          Stream.runForEach((chunk) =>
            Effect.sync(() => {
              const kept = length + chunk.length <= limit ? chunk : chunk.subarray(0, limit - length)
              chunks.push(kept)
              length += kept.length
            })
          ),
          Effect.mapError((error) => new DiarizationFailed({ reason: `decoding failed: ${error.reason}` }))
        )
        const pcm = new Float32Array(length)
        let offset = 0
        for (const chunk of chunks) {
          pcm.set(chunk, offset)
          offset += chunk.length
        }
        chunks.length = 0
        const summary = yield* vad.detect(Stream.make(pcm))
        return yield* diarizer.diarize(pcm, summary.regions, { min: request.minSpeakers, max: request.maxSpeakers })
      })

      return FileDiarizer.of({ diarizeFile })
    })
  )
}
