/**
 * Reading and correcting a finished job's transcript, with the paywall's rules: before
 * `done` there is nothing to read (409 NOT_READY); a locked job reads as a json preview of
 * its first minute and every other format answers 402 `transcript_locked` with pay links;
 * a correction replaces segment text by 0-based index and keeps the timing. What is read carries
 * the speaker names a person gave (`speaker_name` on diarized segments, and in every render).
 */
import { Context, Effect, Layer, Option } from "effect"
import { NotReady, PaymentRequired, ValidationFailed } from "../../src/contract/api/Errors.ts"
import type { Caller } from "../../src/contract/api/Security.ts"
import { billableMinutes } from "../../src/contract/domain/Catalog.ts"
import type { Transcript, TranscriptFormat } from "../../src/contract/domain/Transcript.ts"
import { Paywall } from "../billing/Paywall.ts"
import type { JobRecord } from "../jobs/JobRecord.ts"
import { TranscriptStore } from "../jobs/TranscriptStore.ts"
import { nameSegments } from "../speakers/ApplyNames.ts"
import { SpeakerNameStore } from "../speakers/SpeakerNameStore.ts"
import { type CaptionShape, type RenderedTranscript, TranscriptFormats } from "../TranscriptFormats.ts"

/** A locked transcript's json preview: the phrases that start in the first minute. */
export const lockedPreviewSeconds = 60

export const lockedPreview = (transcript: Transcript): Transcript => {
  const segments = transcript.segments.filter((segment) => segment.start < lockedPreviewSeconds)
  return { ...transcript, segments, text: segments.map((segment) => segment.text).join(" ") }
}

export type TranscriptRead =
  | { readonly _tag: "Preview"; readonly transcript: Transcript }
  | { readonly _tag: "Full"; readonly rendered: RenderedTranscript; readonly basename: string }

export interface SegmentEdit {
  readonly index: number
  readonly text: string
}

export class TranscriptAccess extends Context.Service<TranscriptAccess, {
  /** The stored transcript of a finished job. */
  ready(job: JobRecord): Effect.Effect<Transcript, NotReady>
  /**
   * The job's transcript in `format`, or its preview when locked. `base` is the API root for pay links.
   * `shape` (subtitle-sized cues) is for srt and vtt only: with another format it is refused (422).
   */
  read(
    caller: Caller,
    job: JobRecord,
    format: TranscriptFormat,
    base: string,
    shape?: CaptionShape
  ): Effect.Effect<TranscriptRead, NotReady | PaymentRequired | ValidationFailed>
  correct(job: JobRecord, edits: ReadonlyArray<SegmentEdit>): Effect.Effect<Transcript, NotReady | ValidationFailed>
}>()("verbatim/transcripts/TranscriptAccess") {
  static readonly layer = Layer.effect(
    TranscriptAccess,
    Effect.gen(function*() {
      const store = yield* TranscriptStore
      const formats = yield* TranscriptFormats
      const paywall = yield* Paywall
      const speakerNames = yield* SpeakerNameStore

      const ready = Effect.fn("TranscriptAccess.ready")(function*(job: JobRecord) {
        if (job.status !== "done") {
          return yield* new NotReady({
            error: job.status === "failed"
              ? "The job failed, so it has no transcript; see its error."
              : "The job is not finished yet; poll GET /v1/jobs/{job_id} until status is done."
          })
        }
        const transcript = yield* store.get(job.id)
        if (Option.isNone(transcript)) return yield* Effect.die(new Error(`job ${job.id} is done without a transcript`))
        return transcript.value
      })

      const read = Effect.fn("TranscriptAccess.read")(
        function*(caller: Caller, job: JobRecord, format: TranscriptFormat, base: string, shape?: CaptionShape) {
          if (shape !== undefined && format !== "srt" && format !== "vtt") {
            const given = ([
              ["max_chars_per_line", shape.maxCharsPerLine],
              ["max_lines_per_cue", shape.maxLinesPerCue],
              ["max_cue_seconds", shape.maxCueSeconds]
            ] as const).filter(([, value]) => value !== undefined)
            if (given.length > 0) {
              return yield* new ValidationFailed({
                error: `${given.map(([name]) => name).join(", ")} shape subtitle cues: they apply to format=srt and format=vtt only.`,
                code: "VALIDATION_FAILED",
                detail: given.map(([name]) => ({ loc: ["query", name], msg: "Only for format=srt or format=vtt" }))
              })
            }
          }
          const full = nameSegments(yield* ready(job), yield* speakerNames.get(job.id))
          if (job.locked) {
            if (format === "json") return { _tag: "Preview", transcript: lockedPreview(full) } as const
            const needed = billableMinutes(job.audio_duration_seconds ?? 0)
            return yield* new PaymentRequired({
              error: "This transcript is locked until the account has credit for it; the json format shows a preview.",
              code: "transcript_locked",
              upgrade_url: paywall.pricingUrl(base),
              ...(caller._tag === "Account"
                ? { checkout_url: yield* paywall.coveringUrl(caller.account.id, needed, base), required_minutes: needed }
                : {})
            })
          }
          const rendered = yield* formats.render(full, format, {
            filename: job.filename ?? undefined,
            createdAt: Math.floor(job.created_at.getTime() / 1000)
          }, shape)
          const basename = (job.filename ?? job.id).replace(/\.[A-Za-z0-9]{1,5}$/, "").replace(/[^\w.-]+/g, "_")
          return { _tag: "Full", rendered, basename } as const
        }
      )

      const correct = Effect.fn("TranscriptAccess.correct")(function*(job: JobRecord, edits: ReadonlyArray<SegmentEdit>) {
        const transcript = yield* ready(job)
        const bad = edits.findIndex((edit) => edit.index >= transcript.segments.length)
        if (bad >= 0) {
          return yield* new ValidationFailed({
            error: `The transcript has ${transcript.segments.length} segments; index ${edits[bad]!.index} does not exist.`,
            code: "VALIDATION_FAILED",
            detail: [{ loc: ["body", "segments", bad, "index"], msg: "No such segment" }]
          })
        }
        const byIndex = new Map(edits.map((edit) => [edit.index, edit.text.trim()]))
        const segments = transcript.segments.map((segment, i) => {
          const text = byIndex.get(i)
          return text === undefined ? segment : { ...segment, text }
        })
        const corrected = { ...transcript, segments, text: segments.map((s) => s.text).join(" ") }
        yield* store.save(job.id, corrected)
        return nameSegments(corrected, yield* speakerNames.get(job.id))
      })

      return TranscriptAccess.of({ ready, read, correct })
    })
  )
}
