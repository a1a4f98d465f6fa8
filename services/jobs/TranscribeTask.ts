/**
 * The `transcribe` task kind: claim the job, get its media (stored upload, or download the
 * resolved link), run the speech pipeline writing the job's progress (at most every 2 s;
 * the task's lease is the engine's), and record the outcome once. A run whose job is deleted
 * meanwhile stops at the next progress write; a run that lost its claim records nothing. A job with `diarize` is handed on
 * to the `diarize` kind when one is registered (it then completes the job); otherwise the
 * job completes here. Every failed ending — of a run, or of the engine giving the task up
 * (`SERVICE_ERROR` after the attempt cap, `PROCESSING_STALLED` without progress for the stall limit,
 * `PROCESSING_TIMEOUT` past the limit) — takes its code, sentence and `retryable` from
 * JobFailures.ts.
 */
import { Cause, Clock, Duration, Effect, Option, Schema } from "effect"
import { Transcriber } from "../../pipeline/Transcriber.ts"
import { JobErrorCode } from "../../src/contract/domain/Job.ts"
import { JobsConfig } from "../config/JobsConfig.ts"
import { SpeechConfig } from "../config/SpeechConfig.ts"
import { LinkResolver } from "../links/LinkResolver.ts"
import { sniffMediaType } from "../playback/MediaType.ts"
import { mediaKeys } from "../storage/MediaKeys.ts"
import { MediaStorage } from "../storage/MediaStorage.ts"
import { type GiveUpReason, type GivenUpTask, NoPayload, type TaskEnd, type TaskHandler, taskKind, type TaskRun } from "../work/TaskKind.ts"
import { Tasks } from "../work/Tasks.ts"
import { givenUpFailure, pipelineFailureKind, runFailure } from "./JobFailures.ts"
import { JobRuns } from "./JobRuns.ts"
import type { JobRecord } from "./JobRecord.ts"

/** Keyless samples are previews: the opening two minutes are transcribed. */
export const previewSeconds = 120

/** Progress is written at most this often (and whenever the duration becomes known). */
const progressEveryMs = 2_000

/** The `transcribe` kind: one task per job, no payload; limits here are defaults the handler replaces from JobsConfig. */
export const Transcribe = taskKind({
  kind: "transcribe",
  payload: NoPayload,
  concurrency: 1,
  timeout: "2 hours",
  stallAfter: "5 minutes",
  // The pipeline runs in a worker thread: a hung ONNX run leaves this thread beating the lease.
  watchProgress: true
})

/** The job was deleted, or is run by a newer attempt: this one wrote nothing. */
const notOurs: TaskEnd = { result: "job no longer ours" }

/** The run no longer owns its job (deleted, or claimed by a newer run): stop quietly. */
class RunLost extends Schema.TaggedError<RunLost>()("RunLost", {}) {}

/** The run ends the job as failed, with the code and sentence the client will see. */
class RunFailure extends Schema.TaggedError<RunFailure>()("RunFailure", {
  code: JobErrorCode,
  error: Schema.String,
  retryable: Schema.Boolean
}) {}

const lostIn = (cause: Cause.Cause<unknown>) =>
  cause.reasons.some((reason) =>
    (reason._tag === "Die" && reason.defect instanceof RunLost) || (reason._tag === "Fail" && reason.error instanceof RunLost)
  )

/** The `transcribe` handler; `concurrency` is the process's `VERBATIM_WORKERS`, limits from JobsConfig. */
export const TranscribeTask = Effect.gen(function*() {
  const store = yield* JobRuns
  const storage = yield* MediaStorage
  const resolver = yield* LinkResolver
  const transcriber = yield* Transcriber
  const tasks = yield* Tasks
  const config = { ...(yield* JobsConfig), ...(yield* SpeechConfig) }

  /** The media file of this run: the upload, or the link downloaded into storage. */
  const mediaPath = Effect.fnUntraced(function*(job: JobRecord, token: string) {
    if (job.object_key !== null) {
      return yield* storage.localPath(job.object_key).pipe(
        Effect.mapError(() => new RunFailure(runFailure("mediaMissing")))
      )
    }
    const resolved = job.resolved_media
    if (resolved === null) {
      return yield* new RunFailure(runFailure("noInput"))
    }
    const key = mediaKeys.download(job.id)
    const path = yield* storage.prepare(key)
    const downloaded = yield* resolver.download(resolved, path).pipe(
      Effect.mapError((failed) => new RunFailure({ code: failed.code, error: failed.message, retryable: failed.retryable }))
    )
    yield* store.attachMedia(job.id, token, {
      objectKey: key,
      sizeBytes: downloaded.bytes,
      contentType: downloaded.contentType ?? null,
      mediaType: yield* sniffMediaType(path, { filename: resolved.filename, declared: downloaded.contentType })
    })
    return path
  })

  const runOnce = Effect.fnUntraced(function*(job: JobRecord, token: string, task: TaskRun<null, "job">) {
    let lastBeat = 0
    const beat = (progress: number, facts: { readonly durationSeconds?: number }) =>
      Effect.gen(function*() {
        yield* task.progressed
        const now = yield* Clock.currentTimeMillis
        if (now - lastBeat < progressEveryMs && facts.durationSeconds === undefined) return
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
        maxSeconds: job.account_id === null ? previewSeconds : undefined,
        ...(job.prompt === null ? {} : { prompt: job.prompt }),
        ...(job.task === "transcribe" ? {} : { task: job.task })
      },
      // Progress reports cannot fail; a lost run travels up as a defect and is recognised below.
      (progress, facts) => Effect.orDie(beat(progress, facts))
    ).pipe(
      Effect.catchTags({
        NoAudioInFile: (e) => Effect.fail(new RunFailure(runFailure("noAudio", e.reason))),
        TranscriptionFailed: (e) => Effect.fail(new RunFailure(runFailure(pipelineFailureKind[e.kind], e.reason)))
      })
    )
  })

  const run = Effect.fn("TranscribeTask.run")(function*(task: TaskRun<null, "job">) {
    const claimed = yield* store.claim(task.jobId)
    if (Option.isNone(claimed)) return notOurs
    const { job, token } = claimed.value
    const outcome = yield* runOnce(job, token, task).pipe(
      Effect.map((result) => ({ _tag: "Done" as const, result })),
      Effect.catchCause((cause): Effect.Effect<{ readonly _tag: "Lost" } | RunFailure> => {
        if (lostIn(cause)) return Effect.succeed({ _tag: "Lost" as const })
        const failed = cause.reasons.find((reason) => reason._tag === "Fail")
        if (failed?._tag === "Fail" && failed.error instanceof RunFailure) return Effect.succeed(failed.error)
        if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
        return Effect.as(
          Effect.logError("job run failed unexpectedly", cause),
          new RunFailure(runFailure("unexpected"))
        )
      })
    )
    if (outcome._tag === "Lost") return notOurs
    if (outcome._tag !== "Done") {
      yield* store.fail(job.id, token, { code: outcome.code, error: outcome.error, retryable: outcome.retryable })
      return { result: "job failed", error_code: outcome.code } satisfies TaskEnd
    }
    const result = {
      transcript: outcome.result.transcript,
      audioDurationSeconds: outcome.result.durationSeconds,
      language: outcome.result.language,
      speechDetected: outcome.result.speechDetected,
      speechRatio: outcome.result.speechRatio
    }
    if (job.diarize && task.isRegistered("diarize")) {
      const next = yield* store.handOff(job.id, token, result, "diarize")
      if (Option.isSome(next)) yield* tasks.send(next.value)
      return { result: "job handed on to diarize" } satisfies TaskEnd
    }
    yield* store.complete(job.id, token, result)
    return { result: "job done" } satisfies TaskEnd
  })

  const giveUp = Effect.fn("TranscribeTask.giveUp")(function*(task: GivenUpTask<null, "job">, reason: GiveUpReason) {
    yield* store.fail(task.jobId, null, givenUpFailure[reason])
  })

  return {
    ...Transcribe,
    concurrency: config.workers,
    timeout: Duration.seconds(config.jobTimeoutSeconds),
    stallAfter: Duration.seconds(config.jobStallSeconds),
    run,
    giveUp
  } satisfies TaskHandler<null, "job">
})
