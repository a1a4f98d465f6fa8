/**
 * The clip use cases behind the HTTP adapter.
 *
 * `create` checks, in order: the caller's job (404), finished (409 NOT_READY), not locked
 * (402 `transcript_locked`), its audio still stored (410 AUDIO_MISSING), the stretch
 * (`start_s < end_s`, 1–180 s, inside the recording: 422), then — in one transaction — the
 * charge (402 NO_CREDITS with a pay link when the balance cannot cover it), the clip row
 * and its `render-clip` task row; the task's message is sent after the commit, so the
 * render never starts before its clip exists. A clip is its account's: another account's
 * clip, or one whose job was deleted, is 404. Video links are signed like playback links.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Clip, ClipRequest } from "../../src/contract/api/ClipsApi.ts"
import { clipLengthLimits } from "../../src/contract/api/ClipsApi.ts"
import {
  AudioGone,
  type LinkTokenMissing,
  type LinkTokenRejected,
  NotFound,
  type NotReady,
  PaymentRequired,
  ValidationFailed
} from "../../src/contract/api/Errors.ts"
import type { AccountCaller } from "../../src/contract/api/Security.ts"
import { billableMinutes } from "../../src/contract/domain/Catalog.ts"
import type { AccountId, JobId } from "../../src/contract/domain/Ids.ts"
import { JobAccess, jobNotFound } from "../access/JobAccess.ts"
import { Paywall } from "../billing/Paywall.ts"
import { JobStore } from "../jobs/JobStore.ts"
import type { RequestValidators } from "../playback/ByteRanges.ts"
import { LinkTokens } from "../playback/LinkTokens.ts"
import { describeFile, type MediaReply, replyFor } from "../playback/StoredFiles.ts"
import { MediaStorage } from "../storage/MediaStorage.ts"
import { TranscriptAccess } from "../transcripts/TranscriptAccess.ts"
import { storeTask, Tasks } from "../work/Tasks.ts"
import { TaskStore } from "../work/TaskStore.ts"
import { ClipCharges } from "./ClipCharges.ts"
import { type ClipRecord, ClipStore } from "./ClipStore.ts"
import { RenderClip } from "./RenderClipKind.ts"

/** Lifetime of a clip's video link. */
export const clipLinkSeconds = 3600
/** Float slack when comparing `end_s` with the recording's length. */
const lengthSlackSeconds = 0.05

export const clipVideoPath = (clipId: string, token: string) => `/v1/clips/${clipId}/video?token=${encodeURIComponent(token)}`
export const clipObjectKey = (jobId: string, clipId: string) => `clips/${jobId}/${clipId}.mp4`

const clipNotFound = () => new NotFound({ error: "No clip with this id belongs to the caller." })

const invalid = (field: "start_s" | "end_s", error: string) =>
  new ValidationFailed({ error, code: "VALIDATION_FAILED", detail: [{ loc: ["body", field], msg: error }] })

export class Clips extends Context.Service<Clips, {
  create(
    caller: AccountCaller,
    jobId: JobId,
    request: ClipRequest,
    base: string
  ): Effect.Effect<Clip, NotFound | NotReady | PaymentRequired | AudioGone | ValidationFailed>
  get(accountId: AccountId, clipId: string, base: string): Effect.Effect<Clip, NotFound>
  remove(accountId: AccountId, clipId: string): Effect.Effect<void, NotFound>
  video(clipId: string, token: string | undefined, request: RequestValidators): Effect.Effect<MediaReply, LinkTokenMissing | LinkTokenRejected | NotFound>
}>()("verbatim/clips/Clips") {
  static readonly layer = Layer.effect(
    Clips,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const access = yield* JobAccess
      const jobs = yield* JobStore
      const transcripts = yield* TranscriptAccess
      const storage = yield* MediaStorage
      const paywall = yield* Paywall
      const tokens = yield* LinkTokens
      const store = yield* ClipStore
      const charges = yield* ClipCharges
      const taskStore = yield* TaskStore
      const tasks = yield* Tasks

      const view = Effect.fnUntraced(function*(clip: ClipRecord, base: string) {
        const link = clip.status === "done" ? yield* tokens.issue("clip", clip.id, clipLinkSeconds) : undefined
        return {
          clip_id: clip.id,
          job_id: clip.job_id,
          status: clip.status,
          progress: Math.round(clip.progress),
          start_s: clip.start_s,
          end_s: clip.end_s,
          caption_style: clip.caption_style,
          duration: clip.duration,
          video_url: link === undefined ? null : base + clipVideoPath(clip.id, link.token),
          video_expires_in: link === undefined ? null : link.expiresIn,
          error: clip.error,
          created_at: Math.floor(clip.created_at.getTime() / 1000),
          completed_at: clip.completed_at === null ? null : Math.floor(clip.completed_at.getTime() / 1000)
        } satisfies Clip
      })

      /** The caller's clip, while its job exists. */
      const owned = Effect.fnUntraced(function*(accountId: AccountId, clipId: string) {
        const clip = yield* store.get(clipId)
        if (Option.isNone(clip) || clip.value.account_id !== accountId) return yield* clipNotFound()
        if (Option.isNone(yield* jobs.get(clip.value.job_id))) return yield* clipNotFound()
        return clip.value
      })

      const create = Effect.fn("Clips.create")(function*(caller: AccountCaller, jobId: JobId, request: ClipRequest, base: string) {
        const accountId = caller.account.id
        // An account caller is never asked for a claim token; the case cannot arise.
        const job = yield* access.load(caller, jobId).pipe(Effect.catchTag("ClaimTokenRequired", () => Effect.fail(jobNotFound())))
        const transcript = yield* transcripts.ready(job)
        if (job.locked) {
          const needed = billableMinutes(job.audio_duration_seconds ?? 0)
          return yield* new PaymentRequired({
            error: "This job's transcript is locked until the account has credit for it; clips need it unlocked.",
            code: "transcript_locked",
            upgrade_url: paywall.pricingUrl(base),
            checkout_url: yield* paywall.coveringUrl(accountId, needed, base),
            required_minutes: needed
          })
        }
        const stored = job.object_key === null ? false : yield* storage.localPath(job.object_key).pipe(
          Effect.as(true),
          Effect.catchTag("ObjectMissing", () => Effect.succeed(false))
        )
        if (!stored) {
          return yield* new AudioGone({ error: "The recording of this job is no longer stored, so it cannot be clipped.", code: "AUDIO_MISSING" })
        }
        const recording = job.audio_duration_seconds ?? transcript.duration
        const { start_s: start, end_s: end } = request
        if (start >= recording) return yield* invalid("start_s", `start_s must lie inside the recording (0 to ${recording.toFixed(2)} s).`)
        if (end <= start) return yield* invalid("end_s", "end_s must be after start_s.")
        if (end > recording + lengthSlackSeconds) {
          return yield* invalid("end_s", `end_s must lie inside the recording (at most ${recording.toFixed(2)} s).`)
        }
        const length = Math.min(end, recording) - start
        if (length < clipLengthLimits.min - 1e-9 || length > clipLengthLimits.max + 1e-9) {
          return yield* invalid("end_s", `A clip lasts ${clipLengthLimits.min} to ${clipLengthLimits.max} seconds (this one: ${length.toFixed(2)} s).`)
        }
        const clipId = crypto.randomUUID()
        const created = yield* sql.withTransaction(Effect.gen(function*() {
          const minutes = yield* charges.charge(accountId, clipId, length)
          yield* store.insert({
            id: clipId,
            jobId: job.id,
            accountId,
            startS: start,
            endS: Math.min(end, recording),
            captionStyle: request.caption_style ?? "karaoke",
            chargedMinutes: minutes
          })
          return yield* storeTask(RenderClip, { jobId: job.id, key: clipId, payload: { clipId } }).pipe(
            Effect.provideService(TaskStore, taskStore)
          )
        })).pipe(
          Effect.catchTag("SqlError", Effect.die),
          Effect.catchTag("InsufficientCredit", (short) =>
            Effect.flatMap(paywall.coveringUrl(accountId, short.requiredMinutes - short.balanceMinutes, base), (checkoutUrl) =>
              Effect.fail(
                new PaymentRequired({
                  error: `This clip needs ${short.requiredMinutes} minutes of credit; the balance is ${short.balanceMinutes}.`,
                  code: "NO_CREDITS",
                  checkout_url: checkoutUrl,
                  upgrade_url: paywall.pricingUrl(base),
                  balance_minutes: short.balanceMinutes,
                  required_minutes: short.requiredMinutes
                })
              )))
        )
        yield* tasks.send(created)
        const clip = yield* store.get(clipId)
        if (Option.isNone(clip)) return yield* Effect.die(new Error(`clip ${clipId} vanished right after it was created`))
        return yield* view(clip.value, base)
      })

      const get = Effect.fn("Clips.get")(function*(accountId: AccountId, clipId: string, base: string) {
        return yield* view(yield* owned(accountId, clipId), base)
      })

      const remove = Effect.fn("Clips.remove")(function*(accountId: AccountId, clipId: string) {
        yield* owned(accountId, clipId)
        // The render, if running, sees its row gone at its next check and stops.
        const removed = yield* store.remove(clipId)
        if (Option.isSome(removed) && removed.value.objectKey !== null) yield* storage.remove(removed.value.objectKey)
      })

      const video = Effect.fn("Clips.video")(function*(clipId: string, token: string | undefined, request: RequestValidators) {
        yield* tokens.verify("clip", clipId, token)
        const clip = yield* store.get(clipId)
        if (Option.isNone(clip) || clip.value.status !== "done" || clip.value.object_key === null) return yield* clipNotFound()
        const key = clip.value.object_key
        const path = yield* storage.localPath(key).pipe(Effect.mapError(clipNotFound))
        const file = yield* describeFile(path, key, `clip-${clipId}.mp4`, "video/mp4")
        if (file === undefined) return yield* clipNotFound()
        return replyFor(file, request)
      })

      return Clips.of({ create, get, remove, video })
    })
  )
}
