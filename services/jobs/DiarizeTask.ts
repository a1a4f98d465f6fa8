/**
 * The `diarize` task kind: the second half of a job submitted with `diarize=true`. The
 * transcription run stored the transcript and handed the job on (`JobRuns.handOff`); this run
 * claims the job, diarizes its media in the pipeline worker (`FileDiarizer`: decode → voice
 * activity → speaker embeddings → clustering), labels the stored transcript's words and segments
 * (`assignSpeakers`, which splits a segment at a change of speaker), and completes the job —
 * stored, charged and announced in one transaction, exactly once (the run token guards it).
 *
 * Diarization is an extra: when it fails — `DiarizationFailed` (no voice encoder, a file that no
 * longer decodes, the worker lost), a defect, or the engine giving the task up after its attempt
 * cap, a stall or the time limit — the job still completes with the transcript as transcribed,
 * without speakers, and `diarization: "failed"` on the job says so. The transcript is never lost
 * and the job is charged once, when it completes, whichever way diarization ended.
 *
 * Registration: `DiarizeTask` in `taskKinds` (layers/App.ts). The `FileDiarizer` comes
 * from the pipeline layer; a process built without one (a stand-in pipeline) completes diarize
 * jobs as `failed`.
 */
import { Cause, Duration, Effect, Option, Schedule, Schema } from "effect"
import { assignSpeakers } from "../../pipeline/diarize/AssignSpeakers.ts"
import { FileDiarizer } from "../../pipeline/diarize/FileDiarizer.ts"
import { JobsConfig } from "../config/JobsConfig.ts"
import { MediaStorage } from "../storage/MediaStorage.ts"
import { type GiveUpReason, type GivenUpTask, NoPayload, type TaskHandler, taskKind, type TaskRun } from "../work/TaskKind.ts"
import { runFailure } from "./JobFailures.ts"
import { JobRuns, type Outcome } from "./JobRuns.ts"
import type { JobRecord } from "./JobRecord.ts"
import { previewSeconds } from "./TranscribeTask.ts"

/** How often a diarization checks that its job is still its own (deleted, or claimed anew). */
const jobCheckEvery = Duration.seconds(2)

/** The `diarize` kind: one task per job, no payload; time limits from JobsConfig in the handler. */
export const Diarize = taskKind({
  kind: "diarize",
  payload: NoPayload,
  concurrency: 1,
  maxAttempts: 2,
  timeout: "2 hours",
  stallAfter: "5 minutes"
})

/**
 * Longest recording diarized: the whole recording is held as float PCM while it is diarized
 * (230 MB per hour), so a longer one completes without speakers (`diarization: "failed"`).
 */
export const maxDiarizeSeconds = 4 * 3600

/** The run no longer owns its job: stop without writing. */
class RunLost extends Schema.TaggedError<RunLost>()("RunLost", {}) {}

/** Why diarization did not label the transcript (logged; the job says `failed`). */
class NotDiarized extends Schema.TaggedError<NotDiarized>()("NotDiarized", { reason: Schema.String }) {}

const missingTranscript = runFailure("transcriptMissing")

export const DiarizeTask = Effect.gen(function*() {
  const runs = yield* JobRuns
  const storage = yield* MediaStorage
  const config = yield* JobsConfig
  const diarizer = yield* Effect.serviceOption(FileDiarizer)

  /**
   * Fails with RunLost once the job is no longer this run's (deleted meanwhile, or claimed by a
   * newer run), so a long diarization of a deleted job stops early. The job row's check is the
   * job's own run token (its progress stays at 99); the task's lease is the engine's.
   */
  const watchJob = (job: JobRecord, token: string) =>
    Effect.gen(function*() {
      if (!(yield* runs.heartbeat(job.id, token, 99))) return yield* new RunLost()
    }).pipe(Effect.repeat(Schedule.spaced(jobCheckEvery)), Effect.andThen(Effect.never))

  const turnsOf = (job: JobRecord, staged: Outcome) =>
    Effect.gen(function*() {
      if (Option.isNone(diarizer)) return yield* new NotDiarized({ reason: "this process has no diarizer" })
      // Keyless previews are diarized over their transcribed opening only.
      const maxSeconds = job.account_id === null ? previewSeconds : undefined
      if (maxSeconds === undefined && staged.audioDurationSeconds > maxDiarizeSeconds) {
        return yield* new NotDiarized({ reason: `the recording is longer than ${maxDiarizeSeconds} s` })
      }
      if (job.object_key === null) return yield* new NotDiarized({ reason: "the job has no stored media" })
      const path = yield* storage.localPath(job.object_key).pipe(
        Effect.mapError(() => new NotDiarized({ reason: "the media is missing from storage" }))
      )
      const hints = {
        ...(job.min_speakers === null ? {} : { minSpeakers: job.min_speakers }),
        ...(job.max_speakers === null ? {} : { maxSpeakers: job.max_speakers })
      }
      return yield* diarizer.value.diarizeFile({ path, maxSeconds, ...hints }).pipe(Effect.mapError((failed) => new NotDiarized({ reason: failed.reason })))
    })

  /** The staged outcome with speakers, or marked `failed` without them. */
  const diarized = (job: JobRecord, staged: Outcome, token: string) =>
    Effect.gen(function*() {
      // Nothing was said: there is nothing to label, and that is a finished diarization.
      if (!staged.speechDetected || staged.transcript.segments.length === 0) return { ...staged, diarization: "done" as const }
      const turns = yield* Effect.raceFirst(turnsOf(job, staged), watchJob(job, token))
      return { ...staged, transcript: assignSpeakers(staged.transcript, turns), diarization: "done" as const }
    }).pipe(
      Effect.catchCause((cause): Effect.Effect<Outcome, RunLost> => {
        const failure = cause.reasons.find((reason) => reason._tag === "Fail")
        if (failure?._tag === "Fail" && failure.error instanceof RunLost) return Effect.fail(failure.error)
        if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
        const reason = failure?._tag === "Fail" && failure.error instanceof NotDiarized ? failure.error.reason : Cause.pretty(cause)
        return Effect.as(
          Effect.logWarning("diarization failed; the job completes without speakers", { job_id: job.id, reason }),
          { ...staged, diarization: "failed" as const }
        )
      })
    )

  const run = Effect.fn("DiarizeTask.run")(function*(task: TaskRun<null, "job">) {
    const claimed = yield* runs.claim(task.jobId)
    if (Option.isNone(claimed)) return
    const { job, token } = claimed.value
    const staged = yield* runs.staged(job.id)
    if (Option.isNone(staged)) {
      yield* runs.fail(job.id, token, missingTranscript)
      return
    }
    const outcome = yield* diarized(job, staged.value, token).pipe(Effect.option)
    if (Option.isNone(outcome)) return
    yield* runs.complete(job.id, token, outcome.value)
  })

  /** The engine stopped trying: the job completes with the transcript as transcribed. */
  const giveUp = Effect.fn("DiarizeTask.giveUp")(function*(task: GivenUpTask<null, "job">, reason: GiveUpReason) {
    const claimed = yield* runs.claim(task.jobId)
    if (Option.isNone(claimed)) return
    const staged = yield* runs.staged(task.jobId)
    if (Option.isNone(staged)) {
      yield* runs.fail(task.jobId, claimed.value.token, missingTranscript)
      return
    }
    yield* Effect.logWarning("diarization given up; the job completes without speakers", { job_id: task.jobId, reason })
    yield* runs.complete(task.jobId, claimed.value.token, { ...staged.value, diarization: "failed" })
  })

  return {
    ...Diarize,
    timeout: Duration.seconds(config.jobTimeoutSeconds),
    stallAfter: Duration.seconds(config.jobStallSeconds),
    run,
    giveUp
  } satisfies TaskHandler<null, "job">
})
