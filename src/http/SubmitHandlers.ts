/**
 * `POST /v1/transcribe` (multipart, streamed to storage) and `POST /v1/transcribe/url`
 * (link resolved up front; a refusal queues and charges nothing). Both decode their request and
 * hand it to the submission use case (`SubmitJob`), keyless samples included.
 */
import { Effect, Schema, Stream } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { Multipart } from "effect/http"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { Admission } from "../../services/intake/Admission.ts"
import { fileTooLarge } from "../../services/intake/MediaIntake.ts"
import { type StoredUpload, SubmitJob } from "../../services/intake/SubmitJob.ts"
import { MediaStorage } from "../../services/storage/MediaStorage.ts"
import { Api } from "../contract/api/Api.ts"
import { ValidationFailed } from "../contract/api/Errors.ts"
import { maxFileBytes, SubmitOptions } from "../contract/api/JobsApi.ts"
import { CurrentCaller } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { admittedResponse } from "./Admitted.ts"
import { fileContent } from "./BodyStream.ts"
import { forEachPart } from "./MultipartParts.ts"
import { validationFailed } from "./ErrorResponses.ts"
import { publicBaseUrl } from "./PublicUrl.ts"

const decodeOptions = Schema.decodeUnknownEffect(SubmitOptions)

/** Multipart fields arrive as text; booleans as `true`/`false` (or 1/0). */
const fieldsToOptions = (fields: Record<string, string>) => {
  const options: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(fields)) {
    if (name === "min_speakers" || name === "max_speakers" || name === "speakers_expected") {
      // Whole numbers become numbers; anything else stays text and fails the schema's check.
      options[name] = /^\s*\d{1,3}\s*$/.test(value) ? Number(value) : value
    } else if (name === "diarize" || name === "word_timestamps") {
      const lower = value.trim().toLowerCase()
      options[name] = lower === "true" || lower === "1" ? true : lower === "false" || lower === "0" ? false : value
    } else if (name === "language" || name === "source" || name === "webhook_url" || name === "task") {
      options[name] = value.trim()
    } else if (name === "prompt") {
      options[name] = value
    }
  }
  return options
}

export const SubmitHandlers = HttpApiBuilder.group(
  Api,
  "submit",
  Effect.fn(function*(handlers) {
    const admission = yield* Admission
    const submitJob = yield* SubmitJob
    const config = yield* ServerConfig
    const storage = yield* MediaStorage

    return handlers
      .handle("upload", ({ payload, headers, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const idempotencyKey = yield* admission.checkIdempotencyKey(headers["idempotency-key"])
          // Refuse an oversized body before reading any of it when its length is declared.
          if (Number(request.headers["content-length"] ?? 0) > maxFileBytes + 1024 * 1024) return yield* fileTooLarge()

          const jobId = JobId.make(crypto.randomUUID())
          const fields: Record<string, string> = {}
          let file: StoredUpload | undefined
          const release = Effect.suspend(() => file === undefined ? Effect.void : storage.remove(file.key))

          const onFile = Effect.fnUntraced(function*(part: Multipart.File) {
            if (part.key !== "file") {
              return yield* new ValidationFailed({
                error: "Send the recording in a part named `file`.",
                code: "VALIDATION_FAILED",
                detail: [{ loc: ["body", part.key], msg: "Unexpected file part" }]
              })
            }
            if (file !== undefined) {
              return yield* new ValidationFailed({
                error: "Send one file per request.",
                code: "VALIDATION_FAILED",
                detail: [{ loc: ["body", "file"], msg: "More than one file" }]
              })
            }
            file = yield* submitJob.storeUpload(jobId, { name: part.name, contentType: part.contentType }, fileContent(part))
          })

          const options = yield* Effect.gen(function*() {
            yield* forEachPart(payload as Stream.Stream<Multipart.Part, Multipart.MultipartError>, {
              onField: (name, value) => {
                fields[name] = value
              },
              onFile,
              tooLarge: fileTooLarge,
              unreadable: (reason) =>
                new ValidationFailed({
                  error: "The multipart body could not be read.",
                  code: "VALIDATION_FAILED",
                  detail: [{ loc: ["body"], msg: reason }]
                })
            })
            return yield* decodeOptions(fieldsToOptions(fields)).pipe(
              Effect.mapError((error) => validationFailed(error.issue, "body"))
            )
          }).pipe(Effect.tapError(() => release))

          const missing = new ValidationFailed({
            error: "The request has no file: send it as the multipart part `file`.",
            code: "VALIDATION_FAILED",
            detail: [{ loc: ["body", "file"], msg: "Missing key" }]
          })
          const admitted = yield* submitJob.submit({
            caller,
            source: submitJob.upload(jobId, file, release, missing),
            options,
            idempotencyKey,
            base: publicBaseUrl(config, request)
          })
          return admittedResponse(admitted)
        }))
      .handle("url", ({ payload: { url, ...options }, headers, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const idempotencyKey = yield* admission.checkIdempotencyKey(headers["idempotency-key"])
          const admitted = yield* submitJob.submit({
            caller,
            source: submitJob.link(url),
            options,
            idempotencyKey,
            base: publicBaseUrl(config, request)
          })
          return admittedResponse(admitted)
        }))
  })
)
