/**
 * Direct upload: `init` issues a ticket with a signed, short-lived `upload_url` on this
 * service; the bytes are streamed there (PUT); `commit` echoes the ticket and queues the
 * job. A commit refused with 429 can be retried with the same upload. `init` and `commit` are the
 * two halves of the submission use case (`SubmitJob.openTicket`, `SubmitJob.commitTicket`).
 */
import { Clock, Effect, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
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
  UploadIncomplete
} from "../contract/api/Errors.ts"
import { CurrentAccount } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { Admission } from "../../services/intake/Admission.ts"
import { SubmitJob } from "../../services/intake/SubmitJob.ts"
import { admittedResponse } from "./Admitted.ts"
import { requestBody } from "./BodyStream.ts"

/** Seconds an `upload_url` stays valid. */
export const uploadUrlLifetimeSeconds = 3600

const signedPayload = (jobId: string, objectKey: string, expires: number) => `upload:${jobId}:${objectKey}:${expires}`

const uploadComplete = () =>
  new UploadComplete({ error: "This upload already has all its bytes; they cannot be replaced. Commit it, or ask for a new ticket." })

export const UploadHandlers = HttpApiBuilder.group(
  Api,
  "uploads",
  Effect.fn(function*(handlers) {
    const admission = yield* Admission
    const submitJob = yield* SubmitJob
    const signer = yield* Signer
    const config = yield* ServerConfig

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
        options: ticket.options
      }
    }

    return handlers
      .handle("init", ({ payload: { filename, size_bytes, content_type, ...options }, headers, request }) =>
        Effect.gen(function*() {
          const idempotencyKey = yield* admission.checkIdempotencyKey(headers["idempotency-key"])
          const base = publicBaseUrl(config, request)
          const now = yield* Clock.currentTimeMillis
          const { ticket, replay } = yield* submitJob.openTicket({
            caller: yield* CurrentAccount,
            file: { filename, sizeBytes: size_bytes, contentType: content_type ?? "application/octet-stream" },
            options,
            idempotencyKey,
            base
          })
          const answer = ticketAnswer(ticket, base, now)
          return replay ? HttpServerResponse.jsonUnsafe(answer, { headers: { "x-idempotent-replay": "true" } }) : answer
        }))
      .handle("commit", ({ params, payload, request }) =>
        Effect.gen(function*() {
          const admitted = yield* submitJob.commitTicket({
            caller: yield* CurrentAccount,
            jobId: JobId.make(params.job_id),
            objectKey: payload.object_key,
            options: payload.options,
            originalFilename: payload.original_filename,
            base: publicBaseUrl(config, request)
          })
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
