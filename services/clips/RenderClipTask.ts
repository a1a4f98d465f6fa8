/**
 * The `render-clip` task kind: renders one clip (payload `{ clipId }`; the clip id is also the
 * task's key, one task per clip) with `ClipRenderer`, off the request path.
 *
 * One attempt: a clip that is gone or ended is left alone; a job deleted meanwhile fails the
 * clip; a recording gone from storage fails it and credits its minutes back. Otherwise the
 * clip goes `rendering` and the render runs beside a watcher that, every second, reads the
 * clip row (the task's lease is the engine's): a deleted clip (`DELETE /v1/clips/{id}`) or job
 * stops the render at once (the worker is terminated, the partial file removed) and the task
 * ends.
 * Progress is written at most once a second. ffmpeg refusing the render is final — the clip
 * fails with ffmpeg's reason and its minutes are credited back; a crash of the worker is
 * retried once, and giving up fails the clip the same way.
 *
 * Caption word times: stored, else aligned on demand, else estimated (see WordAlignment).
 *
 * Registration: `RenderClipTask` in `taskKinds` (layers/App.ts), with `ClipStore`, `ClipCharges`, `WordAlignment` and a
 * `ClipRenderer` provided.
 */
import { Clock, Duration, Effect, Option } from "effect"
import { ClipRenderer } from "../../pipeline/render/ClipRenderer.ts"
import type { JobRecord } from "../jobs/JobRecord.ts"
import { JobStore } from "../jobs/JobStore.ts"
import { TranscriptStore } from "../jobs/TranscriptStore.ts"
import { MediaStorage } from "../storage/MediaStorage.ts"
import type { GiveUpReason, TaskHandler, TaskRun } from "../work/TaskKind.ts"
import { ClipCharges } from "./ClipCharges.ts"
import { clipObjectKey } from "./Clips.ts"
import { type ClipRecord, ClipStore } from "./ClipStore.ts"
import { RenderClip, type RenderClipPayload } from "./RenderClipKind.ts"
import { WordAlignment } from "./WordAlignment.ts"

const watchEvery = Duration.seconds(1)
const progressEveryMs = 1000

const giveUpSentence: Record<GiveUpReason, string> = {
  exhausted: "The render crashed twice; try again or choose a shorter clip.",
  stalled: "The render stopped responding.",
  timeout: "The render took longer than allowed."
}

const titleOf = (job: JobRecord) => (job.filename ?? "").replace(/\.[A-Za-z0-9]{1,5}$/, "").trim() || "Verbatim"

export const RenderClipTask = Effect.gen(function*() {
  const clips = yield* ClipStore
  const charges = yield* ClipCharges
  const renderer = yield* ClipRenderer
  const jobs = yield* JobStore
  const transcripts = yield* TranscriptStore
  const storage = yield* MediaStorage
  const alignment = yield* WordAlignment

  const failWithRefund = (clip: ClipRecord, error: string) =>
    Effect.gen(function*() {
      if (yield* clips.fail(clip.id, error)) yield* charges.refund(clip.account_id, clip.id)
    })

  /**
   * Completes when the clip is no longer ours to render: deleted, ended elsewhere, or its job
   * deleted (then the clip fails, so a restored job does not show it rendering for ever).
   */
  const watch = (clip: ClipRecord) =>
    Effect.gen(function*() {
      while (true) {
        yield* Effect.sleep(watchEvery)
        const current = yield* clips.get(clip.id)
        if (Option.isNone(current) || current.value.status !== "rendering") return
        if (Option.isNone(yield* jobs.get(clip.job_id))) {
          yield* clips.fail(clip.id, "The job was deleted while its clip was rendering.")
          return
        }
      }
    })

  const run = Effect.fn("RenderClipTask.run")(function*(task: TaskRun<RenderClipPayload, "job">) {
    const found = yield* clips.get(task.payload.clipId)
    if (Option.isNone(found) || found.value.status === "done" || found.value.status === "failed") return
    const clip = found.value
    const job = yield* jobs.get(clip.job_id)
    if (Option.isNone(job)) {
      yield* clips.fail(clip.id, "The job was deleted before its clip was rendered.")
      return
    }
    const source = job.value.object_key === null
      ? Option.none<string>()
      : yield* storage.localPath(job.value.object_key).pipe(Effect.option)
    if (Option.isNone(source)) {
      yield* failWithRefund(clip, "The recording is no longer stored (AUDIO_MISSING); nothing was charged.")
      return
    }
    const transcript = yield* transcripts.get(clip.job_id)
    const words = Option.isNone(transcript)
      ? []
      : (yield* alignment.clipWords(source.value, transcript.value, clip.start_s, clip.end_s)).words
    if (!(yield* clips.startRendering(clip.id))) return
    const key = clipObjectKey(clip.job_id, clip.id)
    const outputPath = yield* storage.prepare(key)
    const durationSeconds = clip.end_s - clip.start_s
    let lastWrite = 0
    const onProgress = (fraction: number) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (now - lastWrite < progressEveryMs) return
        lastWrite = now
        yield* clips.progress(clip.id, Math.min(99, Math.round(fraction * 100)))
      })
    const outcome = yield* renderer.render({
      inputPath: source.value,
      outputPath,
      startSeconds: clip.start_s,
      durationSeconds,
      style: clip.caption_style,
      words,
      title: titleOf(job.value)
    }, onProgress).pipe(
      Effect.as("rendered" as const),
      Effect.catchTag("RenderFailed", (failed) => Effect.succeed({ failed: failed.reason })),
      Effect.raceFirst(Effect.as(watch(clip), "cancelled" as const))
    )
    if (outcome === "cancelled") {
      yield* storage.remove(key)
      return
    }
    if (outcome !== "rendered") {
      yield* failWithRefund(clip, `The render failed: ${outcome.failed}`)
      return
    }
    // Deleted in the last moment: the file is nobody's.
    if (!(yield* clips.finish(clip.id, key, durationSeconds))) yield* storage.remove(key)
  })

  return {
    ...RenderClip,
    run,
    giveUp: (task, reason) =>
      Effect.gen(function*() {
        // A payload that no longer decodes: the key is the clip id as well.
        const clip = yield* clips.get(task.payload?.clipId ?? task.subKey)
        if (Option.isSome(clip)) yield* failWithRefund(clip.value, giveUpSentence[reason])
      })
  } satisfies TaskHandler<RenderClipPayload, "job">
})
