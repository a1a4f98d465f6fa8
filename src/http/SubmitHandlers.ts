/**
 * `POST /v1/transcribe` (multipart, streamed to storage) and `POST /v1/transcribe/url`
 * (link resolved up front; a refusal queues and charges nothing).
 */
import { Duration, Effect, Option, Schema, Stream } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { Multipart } from "effect/http"
import { LinkResolver } from "../../services/links/LinkResolver.ts"
import { MediaStorage } from "../../services/storage/MediaStorage.ts"
import { MediaDecoder } from "../../pipeline/media/MediaDecoder.ts"
import { Api } from "../contract/api/Api.ts"
import { FileTooLarge, LinkRefusedError, UnsupportedMedia, ValidationFailed } from "../contract/api/Errors.ts"
import { maxAudioSeconds, maxFileBytes, SubmitOptions } from "../contract/api/JobsApi.ts"
import { CurrentCaller } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { acceptedExtensions, extensionOf, isAcceptedMime } from "../contract/domain/MediaTypes.ts"
import { validationFailed } from "./ErrorResponses.ts"
import { publicBaseUrl } from "./PublicUrl.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { makeAdmit, makeCreditCheck, checkIdempotencyKey, makeCheckWebhook, idempotencyFor } from "./Submission.ts"

const decodeOptions = Schema.decodeUnknownEffect(SubmitOptions)

/** Multipart fields arrive as text; booleans as `true`/`false` (or 1/0). */
const fieldsToOptions = (fields: Record<string, string>) => {
  const options: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(fields)) {
    if (name === "diarize" || name === "word_timestamps") {
      const lower = value.trim().toLowerCase()
      options[name] = lower === "true" || lower === "1" ? true : lower === "false" || lower === "0" ? false : value
    } else if (name === "language" || name === "source" || name === "webhook_url") {
      options[name] = value.trim()
    }
  }
  return options
}

const tooLarge = () =>
  new FileTooLarge({
    error: "The file is larger than 5 GB: split the recording.",
    code: "FILE_TOO_LARGE"
  })

const tooLong = (seconds: number) =>
  new FileTooLarge({
    error: `The recording is ${(seconds / 3600).toFixed(1)} hours long; the limit is 10 hours per file: split it.`,
    code: "FILE_TOO_LONG"
  })

export const SubmitHandlers = HttpApiBuilder.group(
  Api,
  "submit",
  Effect.fn(function*(handlers) {
    const admit = yield* makeAdmit
    const checkWebhook = yield* makeCheckWebhook
    const creditCheck = yield* makeCreditCheck
    const config = yield* AppConfig
    const storage = yield* MediaStorage
    const resolver = yield* LinkResolver
    const decoder = yield* MediaDecoder

    return handlers
      .handle("upload", ({ payload, headers, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const idempotencyKey = yield* checkIdempotencyKey(headers["idempotency-key"])
          // Refuse an oversized body before reading any of it when its length is declared.
          if (Number(request.headers["content-length"] ?? 0) > maxFileBytes + 1024 * 1024) return yield* tooLarge()

          const jobId = JobId.make(crypto.randomUUID())
          const fields: Record<string, string> = {}
          let file: { key: string; name: string; contentType: string; bytes: number } | undefined
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
            const extension = extensionOf(part.name)
            if (extension === undefined || !acceptedExtensions.has(extension)) {
              return yield* new UnsupportedMedia({
                error: `Files ending in ${extension ? `.${extension}` : "no extension"} are not accepted; send audio ` +
                  "or video such as mp3, m4a, wav, flac, ogg, opus, mp4, mov, webm or mkv.",
                code: "BAD_EXT"
              })
            }
            if (!isAcceptedMime(part.contentType)) {
              return yield* new UnsupportedMedia({
                error: `The file's type ${part.contentType} is not audio or video.`,
                code: "BAD_MIME"
              })
            }
            const key = `jobs/${jobId}/original.${extension}`
            stored = key
            const { bytes } = yield* storage.write(key, part.content, maxFileBytes).pipe(
              Effect.catchTag("ObjectTooLarge", () => Effect.fail(tooLarge()))
            )
            file = { key, name: part.name, contentType: part.contentType, bytes }
          })

          yield* Stream.runForEach(payload as Stream.Stream<Multipart.Part, Multipart.MultipartError>, (part) => {
            if (part._tag === "Field") {
              fields[part.key] = part.value
              return Effect.void
            }
            return onFile(part as Multipart.File)
          }).pipe(
            Effect.catchTag("MultipartError", (error): Effect.Effect<never, FileTooLarge | ValidationFailed> =>
              error.reason._tag === "FileTooLarge" || error.reason._tag === "BodyTooLarge"
                ? Effect.fail(tooLarge())
                : Effect.fail(
                  new ValidationFailed({
                    error: "The multipart body could not be read.",
                    code: "VALIDATION_FAILED",
                    detail: [{ loc: ["body"], msg: error.reason._tag }]
                  })
                )),
            Effect.tapError(() => release)
          )

          const options = yield* decodeOptions(fieldsToOptions(fields)).pipe(
            Effect.mapError((error) => validationFailed(error.issue, "body")),
            Effect.tapError(() => release)
          )
          if (file === undefined) {
            return yield* new ValidationFailed({
              error: "The request has no file: send it as the multipart part `file`.",
              code: "VALIDATION_FAILED",
              detail: [{ loc: ["body", "file"], msg: "Missing key" }]
            })
          }
          const webhookUrl = yield* checkWebhook(caller, options.webhook_url).pipe(Effect.tapError(() => release))
          const path = yield* storage.localPath(file.key).pipe(Effect.orDie)
          // The container's duration, when it says: refuse a recording over 10 hours now.
          const probe = yield* decoder.probe(path).pipe(Effect.timeoutOption(Duration.seconds(30)))
          const duration = Option.flatMap(probe, (p) => Option.fromNullishOr(p.durationSeconds))
          if (Option.isSome(duration) && duration.value > maxAudioSeconds) {
            yield* release
            return yield* tooLong(duration.value)
          }
          yield* creditCheck(caller, Option.getOrUndefined(duration), publicBaseUrl(config, request)).pipe(
            Effect.tapError(() => release)
          )
          const uploaded = file
          return yield* admit({
            caller,
            idempotency: idempotencyFor(caller, idempotencyKey, "transcribe"),
            release,
            job: {
              id: jobId,
              source: options.source ?? "upload",
              inputKind: "upload",
              filename: uploaded.name,
              objectKey: uploaded.key,
              sizeBytes: uploaded.bytes,
              contentType: uploaded.contentType,
              inputUrl: null,
              resolvedMedia: null,
              language: options.language ?? "auto",
              diarize: options.diarize ?? false,
              wordTimestamps: options.word_timestamps ?? false,
              webhookUrl
            }
          })
        }))
      .handle("url", ({ payload, headers, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const idempotencyKey = yield* checkIdempotencyKey(headers["idempotency-key"])
          const webhookUrl = yield* checkWebhook(caller, payload.webhook_url)
          yield* creditCheck(caller, undefined, publicBaseUrl(config, request))
          const resolved = yield* resolver.resolve(payload.url).pipe(
            Effect.catchTag("LinkRefused", (refused) =>
              Effect.fail(new LinkRefusedError({ error: refused.message, code: refused.code })))
          )
          return yield* admit({
            caller,
            idempotency: idempotencyFor(caller, idempotencyKey, "transcribe_url"),
            release: Effect.void,
            job: {
              id: JobId.make(crypto.randomUUID()),
              source: payload.source ?? "url",
              inputKind: "url",
              filename: resolved.filename ?? resolved.title ?? null,
              objectKey: null,
              sizeBytes: resolved.sizeBytes ?? null,
              contentType: resolved.contentType ?? null,
              inputUrl: payload.url,
              resolvedMedia: resolved,
              language: payload.language ?? "auto",
              diarize: payload.diarize ?? false,
              wordTimestamps: payload.word_timestamps ?? false,
              webhookUrl
            }
          })
        }))
  })
)
