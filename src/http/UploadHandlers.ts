/**
 * Direct upload: `init` issues a ticket with a signed, short-lived `upload_url` on this
 * service; the bytes are streamed there (PUT); `commit` echoes the ticket and queues the
 * job. A commit refused with 429 can be retried with the same upload.
 */
import { Clock, Effect, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { checkSpeakerHints } from "../../services/intake/SpeakerHints.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { IdempotencyKeys } from "../../services/jobs/IdempotencyKeys.ts"
import { JobStore } from "../../services/jobs/JobStore.ts"
import { Signer } from "../../services/security/Signer.ts"
import { MediaStorage } from "../../services/storage/MediaStorage.ts"
import { UploadTickets, type UploadTicketRecord } from "../../services/uploads/UploadTickets.ts"
import { Api } from "../contract/api/Api.ts"
import { publicBaseUrl } from "./PublicUrl.ts"
import {
  KeyMismatch,
  NotFound,
  UploadComplete,
  UploadExpired,
  UploadIncomplete,
  ValidationFailed
} from "../contract/api/Errors.ts"
import { maxFileBytes } from "../contract/api/JobsApi.ts"
import { CurrentAccount } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { Admission, idempotencyFor } from "../../services/intake/Admission.ts"
import { fileTooLarge, MediaIntake, mediaKeys } from "../../services/intake/MediaIntake.ts"
import { admittedResponse } from "./Admitted.ts"
import { requestBody } from "./BodyStream.ts"

/** Seconds an `upload_url` stays valid. */
export const uploadUrlLifetimeSeconds = 3600

/** Key order does not matter when comparing echoed options (jsonb reorders keys). */
const canonical = (value: unknown): string =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`
    : JSON.stringify(value)

const signedPayload = (jobId: string, objectKey: string, expires: number) => `upload:${jobId}:${objectKey}:${expires}`

const uploadComplete = () =>
  new UploadComplete({ error: "This upload already has all its bytes; they cannot be replaced. Commit it, or ask for a new ticket." })

export const UploadHandlers = HttpApiBuilder.group(
  Api,
  "uploads",
  Effect.fn(function*(handlers) {
    const admission = yield* Admission
    const intake = yield* MediaIntake
    const tickets = yield* UploadTickets
    const store = yield* JobStore
    const keys = yield* IdempotencyKeys
    const signer = yield* Signer
    const config = yield* AppConfig
    const storage = yield* MediaStorage

    const ticketAnswer = (ticket: UploadTicketRecord, baseUrl: string, now: number) => {
      const expires = Math.floor(now / 1000) + uploadUrlLifetimeSeconds
      const signature = signer.sign(signedPayload(ticket.job_id, ticket.object_key, expires))
      return {
        job_id: ticket.job_id,
        object_key: ticket.object_key,
        upload_url: `${baseUrl}/v1/uploads/${ticket.job_id}/bytes?expires=${expires}&signature=${signature}`,
        method: "PUT",
        headers: { "Content-Type": "application/octet-stream" },
        expires_in: uploadUrlLifetimeSeconds,
        options: ticket.options as Record<string, unknown>
      }
    }

    return handlers
      .handle("init", ({ payload, headers, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentAccount
          const key = yield* admission.checkIdempotencyKey(headers["idempotency-key"])
          const baseUrl = publicBaseUrl(config, request)
          const now = yield* Clock.currentTimeMillis
          const contentType = payload.content_type ?? "application/octet-stream"
          const extension = yield* intake.accept(payload.filename, contentType)
          if (payload.size_bytes > maxFileBytes) return yield* fileTooLarge()
          yield* admission.checkLanguage(payload.language)
          const speakers = yield* checkSpeakerHints(payload)
          yield* admission.checkTask(payload.task)
          yield* admission.checkPrompt(payload.prompt)
          yield* admission.checkWebhook(caller, payload.webhook_url)
          yield* admission.creditCheck(caller, undefined, baseUrl)
          const jobId = JobId.make(crypto.randomUUID())
          const idempotency = idempotencyFor(caller, key, "uploads_init")
          if (idempotency !== undefined) {
            const earlier = yield* keys.reserve(idempotency, jobId)
            if (Option.isSome(earlier)) {
              const ticket = yield* tickets.get(earlier.value)
              if (Option.isSome(ticket)) {
                return HttpServerResponse.jsonUnsafe(ticketAnswer(ticket.value, baseUrl, now), {
                  headers: { "x-idempotent-replay": "true" }
                })
              }
            }
          }
          const options: Record<string, unknown> = {
            language: payload.language ?? "auto",
            diarize: payload.diarize ?? false,
            // Stored resolved (speakers_expected as both bounds); commit echoes them unchanged.
            ...(speakers.minSpeakers === null ? {} : { min_speakers: speakers.minSpeakers }),
            ...(speakers.maxSpeakers === null ? {} : { max_speakers: speakers.maxSpeakers }),
            word_timestamps: payload.word_timestamps ?? false,
            source: payload.source ?? "upload",
            ...(payload.prompt === undefined ? {} : { prompt: payload.prompt }),
            ...(payload.task === undefined ? {} : { task: payload.task }),
            ...(payload.webhook_url === undefined ? {} : { webhook_url: payload.webhook_url })
          }
          const ticket = yield* tickets.create({
            jobId,
            accountId: caller.account.id,
            apiKeyId: caller.keyId,
            objectKey: mediaKeys.directUpload(jobId, extension),
            filename: payload.filename,
            sizeBytes: payload.size_bytes,
            contentType,
            options
          })
          return ticketAnswer(ticket, baseUrl, now)
        }))
      .handle("commit", ({ params, payload, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentAccount
          const jobId = JobId.make(params.job_id)
          const found = yield* tickets.get(jobId)
          if (Option.isNone(found)) return yield* new NotFound({ error: "No upload ticket has this job id." })
          const ticket = found.value
          if (ticket.account_id !== caller.account.id || ticket.object_key !== payload.object_key) {
            return yield* new KeyMismatch({ error: "This object_key does not belong to this job and caller." })
          }
          if (ticket.committed_at !== null) {
            const job = yield* store.get(jobId)
            if (Option.isSome(job)) {
              return admittedResponse({ answer: { job_id: job.value.id, status: job.value.status }, replay: true })
            }
          }
          if (canonical(payload.options) !== canonical(ticket.options)) {
            return yield* new ValidationFailed({
              error: "`options` must be the ticket's options, unchanged.",
              code: "VALIDATION_FAILED",
              detail: [{ loc: ["body", "options"], msg: "Differs from the upload ticket" }]
            })
          }
          // The ticket's language passed at init; the model may have changed since.
          yield* admission.checkLanguage(
            String((ticket.options as Record<string, unknown>)["language"] ?? "auto"),
            ["body", "options", "language"]
          )
          const ticketOptions = ticket.options as Record<string, unknown>
          yield* admission.checkTask(ticketOptions["task"] as string | undefined, ["body", "options", "task"])
          yield* admission.checkPrompt(ticketOptions["prompt"] as string | undefined, ["body", "options", "prompt"])
          const now = yield* Clock.currentTimeMillis
          if (ticket.received_bytes === null) {
            if (now > ticket.expires_at.getTime()) {
              return yield* new UploadExpired({ error: "The upload ticket expired before any bytes arrived; ask for a new one." })
            }
            return yield* new UploadIncomplete({
              error: "No bytes were uploaded for this ticket yet: send them to upload_url first.",
              code: "UPLOAD_MISSING",
              expected_bytes: ticket.size_bytes,
              received_bytes: null
            })
          }
          if (!(yield* Effect.isSuccess(storage.size(ticket.object_key)))) {
            // Lost after the PUT (removed from storage): the ticket takes the bytes again.
            yield* tickets.reset(jobId)
            return yield* new UploadIncomplete({
              error: "The uploaded bytes are no longer stored: send them to upload_url again, then commit.",
              code: "UPLOAD_MISSING",
              expected_bytes: ticket.size_bytes,
              received_bytes: null
            })
          }
          const mediaType = yield* intake.sniff(ticket.object_key, {
            filename: payload.original_filename ?? ticket.filename,
            declared: ticket.content_type
          })
          const duration = yield* intake.checkDuration(ticket.object_key)
          yield* admission.creditCheck(caller, duration, publicBaseUrl(config, request))
          const options = ticket.options as {
            language: string
            diarize: boolean
            min_speakers?: number
            max_speakers?: number
            word_timestamps: boolean
            source: "upload" | "url" | "recording" | "api"
            prompt?: string
            task?: "transcribe" | "translate"
            webhook_url?: string
          }
          const webhookUrl = yield* admission.checkWebhook(caller, options.webhook_url)
          const admitted = yield* admission.admit({
            caller,
            // Two commits racing for one ticket create one job: the second is a replay.
            idempotency: { scope: `upload:${jobId}`, key: "commit", operation: "uploads_commit" },
            release: Effect.void,
            job: {
              id: jobId,
              source: options.source,
              inputKind: "direct",
              filename: payload.original_filename ?? ticket.filename,
              objectKey: ticket.object_key,
              sizeBytes: ticket.size_bytes,
              contentType: ticket.content_type,
              mediaType,
              inputUrl: null,
              resolvedMedia: null,
              language: options.language,
              diarize: options.diarize,
              minSpeakers: options.min_speakers ?? null,
              maxSpeakers: options.max_speakers ?? null,
              wordTimestamps: options.word_timestamps,
              prompt: options.prompt ?? null,
              task: options.task ?? "transcribe",
              webhookUrl
            }
          })
          yield* tickets.committed(jobId)
          return admittedResponse(admitted)
        }))
  })
)

export const UploadTransferHandlers = HttpApiBuilder.group(
  Api,
  "uploadTransfer",
  Effect.fn(function*(handlers) {
    const tickets = yield* UploadTickets
    const signer = yield* Signer
    const storage = yield* MediaStorage

    // Raw: the bytes are taken under any declared Content-Type, streamed straight to storage.
    return handlers.handleRaw("bytes", ({ params, query, request }) =>
      Effect.gen(function*() {
        const jobId = JobId.make(params.job_id)
        const found = yield* tickets.get(jobId)
        if (Option.isNone(found)) return yield* new NotFound({ error: "No upload ticket has this job id." })
        const ticket = found.value
        const expires = Number(query.expires)
        if (!signer.verify(signedPayload(jobId, ticket.object_key, expires), query.signature)) {
          return yield* new KeyMismatch({ error: "The upload URL's signature does not match this ticket." })
        }
        const now = yield* Clock.currentTimeMillis
        if (!Number.isFinite(expires) || now > expires * 1000 || now > ticket.expires_at.getTime()) {
          return yield* new UploadExpired({ error: "This upload URL has expired; ask for a new ticket." })
        }
        if (ticket.committed_at !== null) {
          return yield* new UploadExpired({ error: "This upload was already committed; ask for a new ticket." })
        }
        if (ticket.received_bytes !== null) return yield* uploadComplete()
        const mismatch = (received: number | null) =>
          new UploadIncomplete({
            error: `The ticket announced ${ticket.size_bytes} bytes` +
              (received === null ? "; more arrived." : `; ${received} arrived.`),
            code: "SIZE_MISMATCH",
            expected_bytes: ticket.size_bytes,
            received_bytes: received
          })
        const body = requestBody(request, () => mismatch(null))
        // Stored only whole and only once: a PUT racing a finished one finds its object (409).
        const { bytes } = yield* storage.writeOnce(ticket.object_key, body, ticket.size_bytes).pipe(
          Effect.catchTags({
            ObjectTooLarge: () => Effect.fail(mismatch(null)),
            ObjectSizeMismatch: (error) => Effect.fail(mismatch(error.received)),
            ObjectExists: () => Effect.andThen(tickets.received(jobId, ticket.size_bytes), Effect.fail(uploadComplete()))
          })
        )
        yield* tickets.received(jobId, bytes)
        return { object_key: ticket.object_key, received_bytes: bytes }
      }))
  })
)
