/** Reading, listing, deleting and restoring jobs. */
import { Effect, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { JobDispatcher } from "../../services/jobs/JobDispatcher.ts"
import { JobStore } from "../../services/jobs/JobStore.ts"
import type { JobRecord } from "../../services/jobs/JobRecord.ts"
import { TranscriptFormats } from "../../services/TranscriptFormats.ts"
import { Api } from "../contract/api/Api.ts"
import { NotReady, PaymentRequired, ValidationFailed } from "../contract/api/Errors.ts"
import { CurrentAccount, CurrentCaller } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { makeJobAccess, notFound } from "./JobAccess.ts"
import { makePaywall } from "./Paywall.ts"
import { publicBaseUrl } from "./PublicUrl.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { billableMinutes } from "../contract/domain/Catalog.ts"
import type { Transcript } from "../contract/domain/Transcript.ts"

/** A locked transcript's json preview: the phrases that start in the first minute. */
export const previewSeconds = 60

export const lockedPreview = (transcript: Transcript): Transcript => {
  const segments = transcript.segments.filter((segment) => segment.start < previewSeconds)
  return { ...transcript, segments, text: segments.map((segment) => segment.text).join(" ") }
}
import { etagOf, makeJobView, toJobView } from "../../services/jobs/JobViews.ts"

export const JobListHandlers = HttpApiBuilder.group(
  Api,
  "jobList",
  Effect.fn(function*(handlers) {
    const store = yield* JobStore
    const config = yield* AppConfig
    const paywall = yield* makePaywall
    const jobView = yield* makeJobView
    return handlers
      .handle("list", ({ query, request }) =>
        Effect.gen(function*() {
          const { account } = yield* CurrentAccount
          const limit = query.limit ?? 20
          const offset = query.offset ?? 0
          const page = yield* store.list(account.id, { limit, offset, status: query.status })
          const unlockUrl = paywall.pricingUrl(publicBaseUrl(config, request))
          const jobs = yield* Effect.forEach(page.jobs, (job) => jobView(job, unlockUrl))
          return { jobs, limit, offset, count: jobs.length, total: page.total }
        }))
      .handle("batchStatus", ({ payload }) =>
        Effect.gen(function*() {
          const { account } = yield* CurrentAccount
          const ids = [...new Set(payload.ids)].map((id) => JobId.make(id))
          const found = (yield* store.getMany(ids)).filter((job) => job.account_id === account.id)
          const byId = new Map(found.map((job) => [job.id as string, job]))
          return {
            jobs: found.map((job) => ({
              job_id: job.id,
              status: job.status,
              progress: job.status === "done" ? 100 : job.progress,
              locked: job.locked,
              ...(job.status === "failed" ? { error_code: job.error_code ?? "SERVICE_ERROR" } : {})
            })),
            not_found: ids.filter((id) => !byId.has(id))
          }
        }))
  })
)

export const JobHandlers = HttpApiBuilder.group(
  Api,
  "jobs",
  Effect.fn(function*(handlers) {
    const store = yield* JobStore
    const dispatcher = yield* JobDispatcher
    const formats = yield* TranscriptFormats
    const config = yield* AppConfig
    const paywall = yield* makePaywall
    const jobView = yield* makeJobView
    const { authorizeJob, loadJob } = yield* makeJobAccess

    /** The stored transcript of a finished job; 409 NOT_READY before that. */
    const readyTranscript = Effect.fnUntraced(function*(job: JobRecord) {
      if (job.status !== "done") {
        return yield* new NotReady({
          error: job.status === "failed"
            ? "The job failed, so it has no transcript; see its error."
            : "The job is not finished yet; poll GET /v1/jobs/{job_id} until status is done."
        })
      }
      const transcript = yield* store.transcript(job.id)
      if (Option.isNone(transcript)) return yield* Effect.die(new Error(`job ${job.id} is done without a transcript`))
      return transcript.value
    })

    return handlers
      .handle("get", ({ params, headers, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const job = yield* loadJob(caller, JobId.make(params.job_id))
          const view = yield* jobView(job, paywall.pricingUrl(publicBaseUrl(config, request)))
          const etag = etagOf(view)
          const sent = headers["if-none-match"]
          if (sent !== undefined && sent.split(",").some((tag) => tag.trim() === etag)) {
            return HttpServerResponse.empty({ status: 304, headers: { etag } })
          }
          return HttpServerResponse.jsonUnsafe(view, { headers: { etag, "cache-control": "no-cache" } })
        }))
      .handle("remove", ({ params }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const job = yield* loadJob(caller, JobId.make(params.job_id))
          yield* store.remove(job.id).pipe(Effect.catchTag("JobNotFound", () => Effect.fail(notFound())))
        }))
      .handle("result", ({ params, query, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const job = yield* loadJob(caller, JobId.make(params.job_id))
          const full = yield* readyTranscript(job)
          const format = query.format ?? "json"
          if (job.locked) {
            const base = publicBaseUrl(config, request)
            if (format === "json") {
              return HttpServerResponse.jsonUnsafe({ ...lockedPreview(full), locked: true, preview: true })
            }
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
          const transcript = full
          const rendered = yield* formats.render(transcript, format, {
            filename: job.filename ?? undefined,
            createdAt: Math.floor(job.created_at.getTime() / 1000)
          })
          const base = (job.filename ?? job.id).replace(/\.[A-Za-z0-9]{1,5}$/, "").replace(/[^\w.-]+/g, "_")
          return HttpServerResponse.uint8Array(rendered.body, {
            contentType: rendered.contentType,
            headers: format === "json" ? {} : { "content-disposition": `attachment; filename="${base}.${rendered.extension}"` }
          })
        }))
      .handle("correct", ({ params, payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const job = yield* loadJob(caller, JobId.make(params.job_id))
          const transcript = yield* readyTranscript(job)
          const bad = payload.segments.find((edit) => edit.index >= transcript.segments.length)
          if (bad !== undefined) {
            return yield* new ValidationFailed({
              error: `The transcript has ${transcript.segments.length} segments; index ${bad.index} does not exist.`,
              code: "VALIDATION_FAILED",
              detail: [{ loc: ["body", "segments", payload.segments.indexOf(bad), "index"], msg: "No such segment" }]
            })
          }
          const edits = new Map(payload.segments.map((edit) => [edit.index, edit.text.trim()]))
          const segments = transcript.segments.map((segment, i) => {
            const text = edits.get(i)
            return text === undefined ? segment : { ...segment, text }
          })
          const corrected = { ...transcript, segments, text: segments.map((s) => s.text).join(" ") }
          yield* store.saveTranscript(job.id, corrected)
          return corrected
        }))
      .handle("restore", ({ params }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const found = yield* store.getAny(JobId.make(params.job_id))
          if (Option.isNone(found) || found.value.deleted_at === null) return yield* notFound()
          const job = yield* authorizeJob(caller, found.value)
          const restored = yield* store.restore(job.id, job.account_id).pipe(
            Effect.catchTag("JobNotFound", () => Effect.fail(notFound()))
          )
          if (restored.status === "queued") yield* dispatcher.dispatch(restored.id)
          return toJobView(restored, yield* store.queuePosition(restored))
        }))
  })
)
