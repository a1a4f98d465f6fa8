/**
 * Speaker diarization: who spoke when, over the voice-activity regions of one recording.
 *
 * Method (defaults measured on shared/media, see the voice-encoder section of
 * shared/models/README.md and test/pipeline/diarize.test.ts):
 * 1. Volume: the whole recording is scaled up to −30 dBFS measured over its speech regions only
 *    (Resemblyzer's increase-only rule; measuring silence too would make a padded file louder).
 * 2. Windows: 1.5 s (150 frames) every 0.75 s inside each speech region, one more aligned to the
 *    region's end, a single shorter window for regions of 0.5–1.5 s (SpeechWindows).
 * 3. Embeddings: the linear power mel of each region (VoiceFrontend) through the GE2E voice
 *    encoder (VoiceEncoder), one L2-normalised 256-d vector per window.
 * 4. Clustering, number of speakers found, not given: average-linkage agglomerative clustering on
 *    cosine similarity, cut at 0.663 (Clustering). 0.663 is the midpoint between the mean cosine
 *    of same-voice windows (0.811) and of different-voice windows (0.515) in the models README.
 *    Only windows of at least 1 s shape the clusters; shorter ones (a lone "Agreed.") join the
 *    nearest cluster mean afterwards, since a 0.5 s embedding is too noisy to found a speaker.
 *    Sweep with this pipeline: a05 finds 2 speakers at every threshold from 0.50 to 0.80; a08
 *    finds 3 from 0.55 to 0.70 (DER 0.8 % with a 0.25 s collar), 2 at 0.50, 4 at 0.72, 5 at 0.75;
 *    the single voices a04 and a07 stay one speaker up to 0.75 and split at 0.80. Usable band:
 *    0.55–0.70.
 *    Recordings with more than `maxClusterWindows` reliable windows (default 2,000 ≈ 25 min of
 *    speech) cluster an evenly strided subset of that size; every other window then takes the
 *    cluster whose mean embedding is nearest, which bounds memory to one 2,000² float32 matrix
 *    (16 MB). A 40-minute, 5-voice concatenation (bench/diarize.ts) still finds 5 speakers.
 * 5. Turns: each 10 ms speech frame takes the label of the nearest window centre in its region;
 *    pieces of one speaker less than 1 s apart form one turn; speakers are named SPEAKER_00,
 *    SPEAKER_01, … in order of first appearance.
 *
 * No speech region (or none long enough for a window) → no turns, not a failure. A missing
 * model file or an ONNX error → `DiarizationFailed`, so the caller can still complete the
 * transcript without speakers.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { SpeechSpan } from "../vad/VoiceActivity.ts"
import { averageLinkage, type ClusterBounds, cosine } from "./Clustering.ts"
import { labelTurns, planWindows, type SpeakerTurn, toSampleRegions } from "./SpeechWindows.ts"
import { type MelWindow, meanOf, normalize, VoiceEncoder, type VoiceEncoderOptions } from "./VoiceEncoder.ts"
import { dbfs, makeMelExtractor, N_MELS, volumeGain } from "./VoiceFrontend.ts"

export type { SpeakerTurn } from "./SpeechWindows.ts"

export class DiarizationFailed extends Schema.TaggedError<DiarizationFailed>()("DiarizationFailed", {
  reason: Schema.String
}) {}

export interface DiarizerOptions extends VoiceEncoderOptions {
  /** Merge clusters while their average cosine similarity is at least this (default 0.663). */
  readonly threshold?: number
  /** Window length and hop in seconds (default 1.5 and 0.75). */
  readonly windowSeconds?: number
  readonly hopSeconds?: number
  /** Shortest region that gets a window of its own (default 0.5 s). */
  readonly minWindowSeconds?: number
  /**
   * Windows shorter than this (from short regions) do not shape the clusters; each joins the
   * nearest cluster afterwards (default 1 s).
   */
  readonly minClusterSeconds?: number
  /** Pieces of one speaker at most this far apart form one turn (default 1 s). */
  readonly mergeGapSeconds?: number
  /** Windows clustered directly; beyond, a strided subset is clustered (default 2,000). */
  readonly maxClusterWindows?: number
}

type Settings = Required<Omit<DiarizerOptions, keyof VoiceEncoderOptions>>

export const defaultDiarizerOptions: Settings = {
  threshold: 0.663,
  windowSeconds: 1.5,
  hopSeconds: 0.75,
  minWindowSeconds: 0.5,
  minClusterSeconds: 1,
  mergeGapSeconds: 1,
  maxClusterWindows: 2000
}

export class Diarizer extends Context.Service<Diarizer, {
  /**
   * Speaker turns of 16 kHz mono `pcm` over its speech `regions` (seconds, as VoiceActivity
   * reports them), ordered by start.
   */
  readonly diarize: (
    pcm: Float32Array,
    regions: ReadonlyArray<SpeechSpan>,
    /** Speaker hints: how many speakers there are at least / at most (see `averageLinkage`). */
    speakers?: ClusterBounds
  ) => Effect.Effect<Array<SpeakerTurn>, DiarizationFailed>
}>()("verbatim/pipeline/Diarizer") {
  /** Needs OnnxRuntime; the voice encoder is built from the same options. */
  static readonly layer = (options: DiarizerOptions = {}) =>
    Layer.effect(Diarizer, make({ ...defaultDiarizerOptions, ...options })).pipe(
      Layer.provide(VoiceEncoder.layer(options))
    )
}

/**
 * Cluster labels for `embeddings`. The clustered set is the reliable windows (all of them when
 * none is reliable), thinned to an evenly strided `maxWindows` when larger; every other window
 * takes the cluster whose normalised mean embedding is nearest by cosine.
 */
export const clusterEmbeddings = (
  embeddings: ReadonlyArray<Float32Array>,
  reliable: ReadonlyArray<boolean>,
  threshold: number,
  maxWindows: number,
  bounds: ClusterBounds = {}
): Array<number> => {
  const reliableIndices = embeddings.flatMap((_, i) => (reliable[i] ? [i] : []))
  const core = reliableIndices.length > 0 ? reliableIndices : embeddings.map((_, i) => i)
  const chosen = core.length <= maxWindows
    ? core
    : Array.from({ length: maxWindows }, (_, k) => core[Math.floor((k * core.length) / maxWindows)]!)
  const chosenLabels = averageLinkage(chosen.map((i) => embeddings[i]!), threshold, bounds)
  if (chosen.length === embeddings.length) return chosenLabels
  const clusters = Math.max(...chosenLabels) + 1
  const centroids = Array.from({ length: clusters }, (_, c) =>
    normalize(meanOf(chosen.filter((_, k) => chosenLabels[k] === c).map((i) => embeddings[i]!))))
  const labels = embeddings.map((e) => {
    let best = 0
    for (let c = 1; c < clusters; c++) if (cosine(e, centroids[c]!) > cosine(e, centroids[best]!)) best = c
    return best
  })
  chosen.forEach((i, k) => {
    labels[i] = chosenLabels[k]!
  })
  return labels
}

/** Windows embedded per encoder call (their mels are held until then). */
const EMBED_CHUNK = 256

const make = (options: Settings) =>
  Effect.gen(function*() {
    const encoder = yield* VoiceEncoder
    const mel = makeMelExtractor()
    const windowOptions = {
      windowFrames: Math.round(options.windowSeconds * 100),
      hopFrames: Math.max(1, Math.round(options.hopSeconds * 100)),
      minFrames: Math.round(options.minWindowSeconds * 100)
    }
    const minClusterFrames = Math.round(options.minClusterSeconds * 100)

    const diarize = Effect.fn("Diarizer.diarize")(function*(pcm: Float32Array, spans: ReadonlyArray<SpeechSpan>, speakers: ClusterBounds = {}) {
      const regions = toSampleRegions(spans, pcm.length)
      const plans = planWindows(regions, windowOptions)
      if (plans.length === 0) return []
      const gain = volumeGain(dbfs(pcm, regions.map((r) => [r.start, r.end] as const)))
      // One region's mel at a time, embedded every EMBED_CHUNK windows: memory stays bounded.
      const embeddings: Array<Float32Array> = []
      let windows: Array<MelWindow> = []
      const flush = Effect.suspend(() => {
        const batch = windows
        windows = []
        return Effect.scoped(encoder.embed(batch))
      }).pipe(
        Effect.map((vectors) => {
          for (const v of vectors) embeddings.push(v)
        }),
        Effect.mapError((error) =>
          new DiarizationFailed({
            reason: error._tag === "VoiceEncoderMissing"
              ? `voice encoder model not found at ${error.path}`
              : `voice encoder: ${error.message}`
          })
        )
      )
      let current = -1
      let spectrogram: Float32Array = new Float32Array(0)
      for (const plan of plans) {
        if (plan.region !== current) {
          current = plan.region
          const r = regions[current]!
          spectrogram = mel.compute(pcm, r.start, r.end, gain)
        }
        windows.push({
          frames: plan.frames,
          data: spectrogram.subarray(plan.firstFrame * N_MELS, (plan.firstFrame + plan.frames) * N_MELS)
        })
        if (windows.length >= EMBED_CHUNK) yield* flush
      }
      yield* flush
      // The encoder divides by the norm after a ReLU: an all-zero output is NaN. Such a window
      // says nothing about its voice and is dropped (its frames go to the nearest other window).
      const kept = plans.flatMap((_, i) => (embeddings[i]!.every(Number.isFinite) ? [i] : []))
      if (kept.length === 0) return []
      const keptPlans = kept.map((i) => plans[i]!)
      const reliable = keptPlans.map((p) => p.frames >= minClusterFrames)
      const labels = clusterEmbeddings(kept.map((i) => embeddings[i]!), reliable, options.threshold, options.maxClusterWindows, speakers)
      return labelTurns(regions, keptPlans, labels, options.mergeGapSeconds)
    })

    return Diarizer.of({ diarize })
  })
