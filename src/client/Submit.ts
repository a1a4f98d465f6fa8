/** `POST /v1/transcribe`: one recording as multipart/form-data, with the shared job options. */
import { Effect } from "effect"
import type { SubmitOptions } from "../contract/api/JobsApi.ts"
import type { VerbatimClient } from "./Client.ts"
import { type MediaInput, openMedia } from "./Media.ts"

export interface SubmitRequest {
  readonly options?: SubmitOptions | undefined
  /** Sent as `Idempotency-Key`: a retry with the same key replays the first job (200). */
  readonly idempotencyKey?: string | undefined
}

export const idempotencyHeaders = (key: string | undefined) => key === undefined ? {} : { "idempotency-key": key }

/** Options as form fields (booleans as `true`/`false`), before the file as the server reads them. */
const optionFields = (options: SubmitOptions): Array<[string, string]> =>
  Object.entries(options).map(([name, value]) => [name, String(value)])

export const submitFile = Effect.fn("VerbatimClient.submitFile")(function*(
  client: VerbatimClient,
  input: MediaInput,
  request: SubmitRequest = {}
) {
  const media = yield* openMedia(input)
  const form = new FormData()
  for (const [name, value] of optionFields(request.options ?? {})) form.append(name, value)
  form.append("file", media.blob, media.filename)
  return yield* client.api.submit.upload({ payload: form, headers: idempotencyHeaders(request.idempotencyKey) })
})
