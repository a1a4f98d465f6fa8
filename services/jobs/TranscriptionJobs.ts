/**
 * The work of one job run (the `JobProcessor` the durable runner calls): claim the job,
 * get its media (stored upload, or download the resolved link), run the speech pipeline
 * with heartbeats, and record the outcome once. A run whose job is deleted meanwhile is
 * interrupted at the next heartbeat; a run that lost its claim records nothing.
 */
import { Cause, Clock, Effect, Layer, Option, Schema } from "effect"
import { Transcriber } from "../../pipeline/Transcriber.ts"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { JobErrorCode } from "../../src/contract/domain/Job.ts"
import { LinkResolver, ResolvedMedia } from "../links/LinkResolver.ts"
import { MediaStorage } from "../storage/MediaStorage.ts"
import { JobEvents } from "./JobEvents.ts"
import { JobProcessor, UnfinishedJobs } from "./JobProcessor.ts"
import type { JobRecord } from "./JobRecord.ts"
import { JobStore } from "./JobStore.ts"

/** Keyless samples are previews: the opening two minutes are transcribed. */
export const previewSeconds = 120

/** Heartbeats at most this often; the stall watchdog waits far longer. */
const heartbeatEveryMs = 2_000

/** The run no longer owns its job (deleted, or claimed by a newer run): stop quietly. */
class RunLost extends Schema.TaggedError<RunLost>()("RunLost", {}) {}

/** The run ends the job as failed, with the code and sentence the client will see. */
class RunFailure extends Schema.TaggedError<RunFailure>()("RunFailure", {
  code: JobErrorCode,
  error: Schema.String,
  retryable: Schema.Boolean
}) {}

const decodeResolved = Schema.decodeUnknownEffect(ResolvedMedia)

const lostIn = (cause: Cause.Cause<unknown>) =>
  cause.reasons.some((reason) =>
    (reason._tag === "Die" && reason.defect instanceof RunLost) || (reason._tag === "Fail" && reason.error instanceof RunLost)
  )

export const TranscriptionJobsLayer = Layer.effect(
  JobProcessor,
  Effect.gen(function*() {
    const store = yield* JobStore
    const storage = yield* MediaStorage
    const resolver = yield* LinkResolver
    const transcriber = yield* Transcriber
    const events = yield* JobEvents

    /** The media file of this run: the upload, or the link downloaded into storage. */
    const mediaPath = Effect.fnUntraced(function*(job: JobRecord, token: string) {
      if (job.object_key !== null) {
        return yield* storage.localPath(job.object_key).pipe(
          Effect.mapError(() =>
            new RunFailure({ code: "SERVICE_ERROR", error: "The uploaded file is missing from storage.", retryable: false })
          )
        )
      }
      const raw = typeof job.resolved_media === "string" ? JSON.parse(job.resolved_media) : job.resolved_media
      const resolved = yield* decodeResolved(raw).pipe(
        Effect.mapError(() =>
          new RunFailure({ code: "SERVICE_ERROR", error: "The job's link could not be read back.", retryable: false })
        )
      )
      const key = `jobs/${job.id}/download`
      const path = yield* storage.prepare(key)
      const downloaded = yield* resolver.download(resolved, path).pipe(
        Effect.mapError((failed) => new RunFailure({ code: failed.code, error: failed.message, retryable: failed.retryable }))
      )
      yield* store.attachMedia(job.id, token, {
        objectKey: key,
        sizeBytes: downloaded.bytes,
        contentType: downloaded.contentType ?? null
      })
      return path
    })

    const runOnce = Effect.fnUntraced(function*(job: JobRecord, token: string) {
      let lastBeat = 0
      const beat = (progress: number, facts: { readonly durationSeconds?: number }) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          if (now - lastBeat < heartbeatEveryMs && facts.durationSeconds === undefined) return
          lastBeat = now
          const alive = yield* store.heartbeat(job.id, token, Math.min(99, progress), {
            ...(facts.durationSeconds === undefined ? {} : { audioDurationSeconds: facts.durationSeconds })
          })
          if (!alive) return yield* new RunLost()
        })

      const path = yield* mediaPath(job, token)
      yield* beat(1, {})
      return yield* transcriber.transcribe(
        {
          path,
          language: job.language_requested,
          wordTimestamps: job.word_timestamps,
          maxSeconds: job.account_id === null ? previewSeconds : undefined
        },
        // Progress reports cannot fail; a lost run travels up as a defect and is recognised below.
        (progress, facts) => Effect.orDie(beat(progress, facts))
      ).pipe(
        Effect.catchTags({
          NoAudioInFile: (e) =>
            Effect.fail(new RunFailure({ code: "NO_AUDIO", error: `The file has no usable audio: ${e.reason}.`, retryable: false })),
          TranscriptionFailed: (e) =>
            Effect.fail(
              new RunFailure({ code: "SERVICE_ERROR", error: `Transcription failed: ${e.reason}.`, retryable: true })
            )
        })
      )
    })

    const process = Effect.fn("TranscriptionJobs.process")(function*(jobId: JobId) {
      const claimed = yield* store.claim(jobId)
      if (Option.isNone(claimed)) return
      const { job, token } = claimed.value
      const outcome = yield* runOnce(job, token).pipe(
        Effect.map((result) => ({ _tag: "Done" as const, result })),
        Effect.catchCause((cause): Effect.Effect<{ readonly _tag: "Lost" } | RunFailure> => {
          if (lostIn(cause)) return Effect.succeed({ _tag: "Lost" as const })
          const failed = cause.reasons.find((reason) => reason._tag === "Fail")
          if (failed?._tag === "Fail" && failed.error instanceof RunFailure) return Effect.succeed(failed.error)
          if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
          return Effect.as(
            Effect.logError("job run failed unexpectedly", cause),
            new RunFailure({
              code: "SERVICE_ERROR",
              error: "The service failed while transcribing; retrying can succeed.",
              retryable: true
            })
          )
        })
      )
      if (outcome._tag === "Lost") return
      const ended = outcome._tag === "Done"
        ? yield* store.complete(job.id, token, {
          transcript: outcome.result.transcript,
          audioDurationSeconds: outcome.result.durationSeconds,
          language: outcome.result.language,
          speechDetected: outcome.result.speechDetected,
          speechRatio: outcome.result.speechRatio
        })
        : yield* store.fail(job.id, token, { code: outcome.code, error: outcome.error, retryable: outcome.retryable })
      if (Option.isSome(ended)) yield* events.jobEnded(ended.value)
    })

    return JobProcessor.of({ process })
  })
)

export const UnfinishedJobsLayer = Layer.effect(
  UnfinishedJobs,
  Effect.map(JobStore, (store) => UnfinishedJobs.of({ list: store.unfinished }))
)
