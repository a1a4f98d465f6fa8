/**
 * `POST /v1/transcribe` (multipart, streamed to storage) and `POST /v1/transcribe/url`
 * (link resolved up front; a refusal queues and charges nothing).
 */
import { Effect, Schema, Stream } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { Multipart } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { Admission, idempotencyFor } from "../../services/intake/Admission.ts"
import { fileTooLarge, MediaIntake, mediaKeys } from "../../services/intake/MediaIntake.ts"
import { LinkResolver } from "../../services/links/LinkResolver.ts"
import { MediaStorage } from "../../services/storage/MediaStorage.ts"
import { checkSpeakerHints } from "../../services/intake/SpeakerHints.ts"
import { Api } from "../contract/api/Api.ts"
import { LinkRefusedError, ValidationFailed } from "../contract/api/Errors.ts"
import { maxFileBytes, SubmitOptions } from "../contract/api/JobsApi.ts"
import { CurrentCaller } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { admittedResponse } from "./Admitted.ts"
import { fileContent } from "./BodyStream.ts"
import { forEachPart } from "./MultipartParts.ts"
import { linkJob, uploadJob } from "./NewJobs.ts"
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
    const intake = yield* MediaIntake
    const config = yield* AppConfig
    const storage = yield* MediaStorage
    const resolver = yield* LinkResolver

    return handlers
      .handle("upload", ({ payload, headers, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const idempotencyKey = yield* admission.checkIdempotencyKey(headers["idempotency-key"])
          // Refuse an oversized body before reading any of it when its length is declared.
          if (Number(request.headers["content-length"] ?? 0) > maxFileBytes + 1024 * 1024) return yield* fileTooLarge()

          const jobId = JobId.make(crypto.randomUUID())
          const fields: Record<string, string> = {}
          let file: { key: string; name: string; contentType: string; bytes: number; mediaType: string } | undefined
          let stored: string | undefined
          const release = Effect.suspend(() => stored === undefined ? Effect.void : storage.remove(stored))

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
            const extension = yield* intake.accept(part.name, part.contentType)
            const key = mediaKeys.original(jobId, extension)
            stored = key
            const { bytes } = yield* storage.write(key, fileContent(part), maxFileBytes).pipe(
              Effect.catchTag("ObjectTooLarge", () => Effect.fail(fileTooLarge()))
            )
            const mediaType = yield* intake.sniff(key, { filename: part.name, declared: part.contentType })
            file = { key, name: part.name, contentType: part.contentType, bytes, mediaType }
          })

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
          }).pipe(
            Effect.tapError(() => release)
          )

          const options = yield* decodeOptions(fieldsToOptions(fields)).pipe(
            Effect.mapError((error) => validationFailed(error.issue, "body")),
            Effect.tapError(() => release)
          )
          yield* admission.checkLanguage(options.language).pipe(Effect.tapError(() => release))
          const speakers = yield* checkSpeakerHints(options).pipe(Effect.tapError(() => release))
          yield* admission.checkTask(options.task).pipe(Effect.tapError(() => release))
          yield* admission.checkPrompt(options.prompt).pipe(Effect.tapError(() => release))
          if (file === undefined) {
            return yield* new ValidationFailed({
              error: "The request has no file: send it as the multipart part `file`.",
              code: "VALIDATION_FAILED",
              detail: [{ loc: ["body", "file"], msg: "Missing key" }]
            })
          }
          const webhookUrl = yield* admission.checkWebhook(caller, options.webhook_url).pipe(Effect.tapError(() => release))
          const duration = yield* intake.checkDuration(file.key).pipe(Effect.tapError(() => release))
          yield* admission.creditCheck(caller, duration, publicBaseUrl(config, request)).pipe(
            Effect.tapError(() => release)
          )
          const uploaded = file
          const admitted = yield* admission.admit({
            caller,
            idempotency: idempotencyFor(caller, idempotencyKey, "transcribe"),
            release,
            job: uploadJob(jobId, uploaded, {
              source: options.source ?? "upload",
              language: options.language ?? "auto",
              diarize: options.diarize ?? false,
              wordTimestamps: options.word_timestamps ?? false,
              prompt: options.prompt,
              task: options.task
            }, webhookUrl, speakers)
          })
          return admittedResponse(admitted)
        }))
      .handle("url", ({ payload, headers, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const idempotencyKey = yield* admission.checkIdempotencyKey(headers["idempotency-key"])
          yield* admission.checkLanguage(payload.language)
          const speakers = yield* checkSpeakerHints(payload)
          yield* admission.checkTask(payload.task)
          yield* admission.checkPrompt(payload.prompt)
          const webhookUrl = yield* admission.checkWebhook(caller, payload.webhook_url)
          yield* admission.creditCheck(caller, undefined, publicBaseUrl(config, request))
          const resolved = yield* resolver.resolve(payload.url).pipe(
            Effect.catchTag("LinkRefused", (refused) =>
              Effect.fail(new LinkRefusedError({ error: refused.message, code: refused.code })))
          )
          const admitted = yield* admission.admit({
            caller,
            idempotency: idempotencyFor(caller, idempotencyKey, "transcribe_url"),
            release: Effect.void,
            job: linkJob(payload.url, resolved, payload, webhookUrl, speakers)
          })
          return admittedResponse(admitted)
        }))
  })
)
