/**
 * The direct-upload flow for large files: `POST /v1/uploads/init` for a ticket, the bytes
 * sent to its signed `upload_url` with the ticket's method and headers, then
 * `POST /v1/uploads/{job_id}/commit` echoing `object_key` and `options`.
 */
import { Effect } from "effect"
import { HttpBody, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api } from "../contract/api/Api.ts"
import type { VerbatimClient } from "./Client.ts"
import { type MediaInput, openMedia } from "./Media.ts"
import { idempotencyHeaders, type SubmitRequest } from "./Submit.ts"

const decodeTransfer = HttpApiClient.decodeResponse(Api, { group: "uploadTransfer", endpoint: "bytes" })

export const uploadDirect = Effect.fn("VerbatimClient.uploadDirect")(function*(
  client: VerbatimClient,
  input: MediaInput,
  request: SubmitRequest = {}
) {
  const media = yield* openMedia(input)
  const ticket = yield* client.api.uploads.init({
    payload: { filename: media.filename, size_bytes: media.blob.size, content_type: media.contentType, ...request.options },
    headers: idempotencyHeaders(request.idempotencyKey)
  })
  const transfer = HttpClientRequest.make(ticket.method.toUpperCase() as "PUT")(ticket.upload_url).pipe(
    HttpClientRequest.setHeaders(ticket.headers),
    HttpClientRequest.setBody(HttpBody.raw(media.blob, {
      contentType: ticket.headers["Content-Type"] ?? media.contentType,
      contentLength: media.blob.size
    }))
  )
  // The transfer's own errors (expired or tampered URL, size mismatch) come back typed.
  yield* Effect.scoped(Effect.flatMap(client.http.execute(transfer), decodeTransfer))
  return yield* client.api.uploads.commit({
    params: { job_id: ticket.job_id },
    payload: { object_key: ticket.object_key, options: ticket.options, original_filename: media.filename }
  })
})
