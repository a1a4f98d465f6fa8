/**
 * `POST /v1/audio/transcriptions` and `POST /v1/audio/translations`, OpenAI's audio API, so
 * OpenAI SDKs and tools work unchanged against Verbatim. A translation is a job with
 * `task=translate` (English text; the language is detected, so the form has no `language`). The key comes as `Authorization: Bearer` (on this route
 * only). The request is an ordinary job (source `api`): the same media checks, credit check,
 * concurrency cap and durable runner as `POST /v1/transcribe`; the handler only waits for
 * the job to end and answers in the requested `response_format`. The job stays listed and is
 * charged like any other; a client that hangs up does not stop it. Refusals use OpenAI's
 * error body with Verbatim's HTTP status.
 */
import { Effect, Option, Schedule, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse, type Multipart } from "effect/http"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { fileTooLarge } from "../../services/intake/MediaIntake.ts"
import { type StoredUpload, SubmitJob } from "../../services/intake/SubmitJob.ts"
import { fileContent } from "./BodyStream.ts"
import { forEachPart } from "./MultipartParts.ts"
import type { JobRecord } from "../../services/jobs/JobRecord.ts"
import { JobStore } from "../../services/jobs/JobStore.ts"
import { MediaStorage } from "../../services/storage/MediaStorage.ts"
import { TranscriptAccess } from "../../services/transcripts/TranscriptAccess.ts"
import type { ValidationFailed } from "../contract/api/Errors.ts"
import { maxFileBytes, submitDefaults } from "../contract/api/JobsApi.ts"
import type { AccountCaller } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { Language, whisperLanguages } from "../contract/domain/Languages.ts"
import { makeBearerAuth } from "./BearerAuth.ts"
import { statusOfSchema } from "./ErrorResponses.ts"
import { openAiError, renderedFormat, type ResponseFormat, responseFormats, verboseJson } from "./OpenAiFormats.ts"
import { publicBaseUrl } from "./PublicUrl.ts"

export const openAiTranscriptionsPath = "/v1/audio/transcriptions"
export const openAiTranslationsPath = "/v1/audio/translations"

/** A refusal of this adapter's own (bad form fields), already in OpenAI's terms. */
export class OpenAiRefusal extends Schema.TaggedError<OpenAiRefusal>()("OpenAiRefusal", {
  status: Schema.Number,
  error: Schema.String,
  code: Schema.String,
  param: Schema.NullOr(Schema.String)
}) {}

const invalid = (param: string, error: string) => new OpenAiRefusal({ status: 400, error, code: "invalid_value", param })

const isLanguage = Schema.is(Language)

/** How often the waiting request looks at its job. */
const pollEvery = "250 millis"

interface Form {
  readonly format: ResponseFormat
  readonly language: string
  readonly granularities: ReadonlySet<string>
  readonly prompt: string | undefined
  readonly task: "transcribe" | "translate"
}

/**
 * The form fields (everything but `file`), checked as OpenAI does. `temperature` is accepted and
 * not used. Translations take no `language` nor granularities (OpenAI's form): ignored if sent.
 */
const readForm = (fields: Record<string, Array<string>>, task: "transcribe" | "translate") =>
  Effect.gen(function*() {
    const one = (name: string) => fields[name]?.[0]?.trim()
    const model = one("model")
    if (model === undefined || model === "") return yield* invalid("model", "you must provide a model parameter")
    const format = (one("response_format") ?? "json") as ResponseFormat
    if (!responseFormats.includes(format)) {
      return yield* invalid("response_format", `response_format must be one of ${responseFormats.join(", ")}`)
    }
    const language = task === "translate" ? submitDefaults.language : one("language") ?? submitDefaults.language
    if (!isLanguage(language)) {
      return yield* invalid(
        "language",
        `language must be an ISO-639-1 code Whisper knows (${whisperLanguages.join(", ")}), not \`${language}\``
      )
    }
    const temperature = one("temperature")
    if (temperature !== undefined && !(Number(temperature) >= 0 && Number(temperature) <= 1)) {
      return yield* invalid("temperature", "temperature must be a number between 0 and 1")
    }
    const granularities = task === "translate"
      ? new Set<string>()
      : new Set([...(fields["timestamp_granularities[]"] ?? []), ...(fields["timestamp_granularities"] ?? [])])
    for (const value of granularities) {
      if (value !== "segment" && value !== "word") {
        return yield* invalid("timestamp_granularities[]", "timestamp_granularities[] takes segment and/or word")
      }
    }
    const prompt = fields["prompt"]?.[0]
    return { format, language, granularities, prompt: prompt?.trim() === "" ? undefined : prompt, task } satisfies Form
  })

/** A contract error's HTTP status: its class is a Schema that declares it. */
const statusOf = (error: object): number => Schema.isSchema(error.constructor) ? statusOfSchema(error.constructor) : 400

/** The form field OpenAI names for a refused option (`task` is chosen by the route, i.e. the model). */
const openAiParam: Record<string, string> = { language: "language", task: "model", prompt: "prompt" }

/** The use case's 422 for an option becomes OpenAI's 400 `invalid_value` naming the form field. */
const asOpenAiRefusal = (refused: ValidationFailed): OpenAiRefusal | ValidationFailed => {
  const field = refused.detail[0]?.loc.at(-1)
  const param = typeof field === "string" ? openAiParam[field] : undefined
  return param === undefined ? refused : invalid(param, refused.error)
}

const failedJob = (job: JobRecord) =>
  new OpenAiRefusal({
    status: job.retryable === true ? 503 : 400,
    error: job.error ?? "The transcription failed.",
    code: (job.error_code ?? "failed").toLowerCase(),
    param: job.retryable === true ? null : "file"
  })

const handler = Effect.gen(function*() {
  const authenticate = yield* makeBearerAuth
  const config = yield* ServerConfig
  const submitJob = yield* SubmitJob
  const storage = yield* MediaStorage
  const store = yield* JobStore
  const transcripts = yield* TranscriptAccess

  const waitForEnd = (id: JobId) =>
    store.get(id).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.fail(new OpenAiRefusal({ status: 404, error: "The job was deleted.", code: "not_found", param: null })),
        onSome: Effect.succeed
      })),
      Effect.repeat({ until: (job) => job.status === "done" || job.status === "failed", schedule: Schedule.spaced(pollEvery) })
    )

  const answer = (caller: AccountCaller, job: JobRecord, form: Form, base: string) =>
    Effect.gen(function*() {
      if (form.format === "json" || form.format === "verbose_json") {
        if (job.locked) {
          // The same refusal the REST result would give for a non-preview format.
          yield* transcripts.read(caller, job, "txt", base)
        }
        const transcript = yield* transcripts.ready(job)
        return HttpServerResponse.jsonUnsafe(
          form.format === "json"
            ? { text: transcript.text, usage: { type: "duration", seconds: Math.ceil(transcript.duration) } }
            : verboseJson(transcript, form.granularities, form.task)
        )
      }
      const read = yield* transcripts.read(caller, job, renderedFormat[form.format], base)
      if (read._tag === "Preview") return yield* Effect.die("a preview is only offered as json")
      return HttpServerResponse.uint8Array(read.rendered.body, { contentType: read.rendered.contentType })
    })
  return (task: "transcribe" | "translate") => (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function*() {
      const caller = yield* authenticate(request)
      if (Number(request.headers["content-length"] ?? 0) > maxFileBytes + 1024 * 1024) return yield* fileTooLarge()
      if (!(request.headers["content-type"] ?? "").startsWith("multipart/form-data")) {
        return yield* invalid("file", "send multipart/form-data with the recording in the part `file`")
      }
      const jobId = JobId.make(crypto.randomUUID())
      const fields: Record<string, Array<string>> = {}
      let file: StoredUpload | undefined
      const release = Effect.suspend(() => file === undefined ? Effect.void : storage.remove(file.key))

      const onFile = Effect.fnUntraced(function*(part: Multipart.File) {
        if (part.key !== "file" || file !== undefined) return yield* invalid(part.key, "send one recording, in the part `file`")
        file = yield* submitJob.storeUpload(jobId, { name: part.name, contentType: part.contentType }, fileContent(part))
      })

      const form = yield* Effect.gen(function*() {
        yield* forEachPart(request.multipartStream, {
          onField: (name, value) => {
            ;(fields[name] ??= []).push(value)
          },
          onFile,
          tooLarge: fileTooLarge,
          unreadable: () => invalid("file", "the multipart body could not be read")
        })
        return yield* readForm(fields, task)
      }).pipe(Effect.tapError(() => release))

      yield* submitJob.submit({
        caller,
        source: submitJob.upload(jobId, file, release, invalid("file", "you must provide a file parameter")),
        options: {
          source: "api",
          language: form.language,
          word_timestamps: form.granularities.has("word"),
          ...(form.prompt === undefined ? {} : { prompt: form.prompt }),
          task: form.task
        },
        idempotencyKey: undefined,
        base: publicBaseUrl(config, request)
      }).pipe(Effect.mapError((refused) => refused._tag === "ValidationFailed" ? asOpenAiRefusal(refused) : refused))
      const job = yield* waitForEnd(jobId)
      if (job.status === "failed") return yield* failedJob(job)
      const response = yield* answer(caller, job, form, publicBaseUrl(config, request))
      return HttpServerResponse.setHeader(response, "x-verbatim-job-id", jobId)
    }).pipe(
      Effect.catch((refused) => {
        const problem = refused instanceof OpenAiRefusal
          ? openAiError(refused.status, refused, refused.param)
          : openAiError(statusOf(refused), refused, refused.code.startsWith("BAD_") || refused.code.startsWith("FILE_") ? "file" : null)
        const response = HttpServerResponse.jsonUnsafe(problem.body, { status: problem.status })
        const retryAfter = (refused as { readonly retry_after?: number }).retry_after
        return Effect.succeed(
          retryAfter === undefined ? response : HttpServerResponse.setHeader(response, "retry-after", String(Math.ceil(retryAfter)))
        )
      })
    )
})

export const OpenAiRoutes = HttpRouter.use((router) =>
  Effect.flatMap(handler, (handle) =>
    Effect.andThen(
      router.add("POST", openAiTranscriptionsPath, handle("transcribe")),
      router.add("POST", openAiTranslationsPath, handle("translate"))
    ))
)
