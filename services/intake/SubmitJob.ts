/**
 * The submission use case: every submit path (multipart `POST /v1/transcribe`, keyless samples
 * through the same routes, `POST /v1/transcribe/url`, the direct-upload commit, the
 * OpenAI-compatible route and the MCP `submit_link` tool) hands it (caller, source, options)
 * and gets the admitted job back. The chain is written here once:
 *
 *   accept → write → sniff → option checks → webhook check → duration → credit → admit (with the
 *   idempotency key: replay or new job)
 *
 * The adapter checks the `Idempotency-Key` header's shape before it reads a body. `storeUpload`
 * is the accept → write → sniff part for a multipart file, whose bytes arrive before the form's
 * other fields are known; a direct upload's bytes were written by its PUT, so its source checks
 * they are still there and sniffs them after the option checks; a link has no bytes yet and is
 * resolved after the credit check, so a refused link charges nothing and a broke caller's link
 * is never fetched.
 * Options are the contract's `SubmitOptions`; absent ones take `submitDefaults`, and the job row
 * is built by `newJob` alone. Every refusal is a contract error carrying its HTTP status; what
 * the path stored for a job that is not created is removed.
 */
import { Clock, Context, Effect, Layer, Option, type Stream } from "effect"
import type {
  ConcurrencyLimit,
  FileTooLarge,
  PaymentRequired,
  RateLimited,
  TierForbidden,
  UnsupportedMedia
} from "../../src/contract/api/Errors.ts"
import {
  KeyMismatch,
  LinkRefusedError,
  NotFound,
  UploadExpired,
  UploadIncomplete,
  ValidationFailed
} from "../../src/contract/api/Errors.ts"
import { maxFileBytes, submitDefaults, type SubmitOptions } from "../../src/contract/api/JobsApi.ts"
import type { AccountCaller, Caller } from "../../src/contract/api/Security.ts"
import type { JobSource } from "../../src/contract/domain/Job.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import { IdempotencyKeys } from "../jobs/IdempotencyKeys.ts"
import { type Idempotency, JobStore } from "../jobs/JobStore.ts"
import { LinkResolver, type ResolvedMedia } from "../links/LinkResolver.ts"
import { MediaStorage } from "../storage/MediaStorage.ts"
import { type TicketOptions, UploadTickets, type UploadTicketRecord } from "../uploads/UploadTickets.ts"
import { type AdmitRequest, Admission, type Admitted, idempotencyFor } from "./Admission.ts"
import { fileTooLarge, MediaIntake, mediaKeys } from "./MediaIntake.ts"
import { checkSpeakerHints, type SpeakerHints } from "./SpeakerHints.ts"

/** A multipart file accepted, written to storage and sniffed (`storeUpload`). */
export interface StoredUpload {
  readonly key: string
  readonly name: string
  readonly contentType: string
  readonly bytes: number
  /** What playback serves it as (`MediaIntake.sniff`). */
  readonly mediaType: string
}

/** The fields of the job row that depend on where the recording comes from. */
export interface SourceMedia {
  readonly id: JobId
  /** The `source` column when the options name none. */
  readonly defaultSource: JobSource
  readonly inputKind: "upload" | "url" | "direct"
  readonly filename: string | null
  readonly objectKey: string | null
  readonly sizeBytes: number | null
  readonly contentType: string | null
  readonly mediaType: string | null
  readonly inputUrl: string | null
  readonly resolvedMedia: ResolvedMedia | null
}

/**
 * Where a submit's recording comes from, made by `SubmitJob.upload` or `.link` (a commit's is made
 * inside `commitTicket`). `E` is what its own checks refuse with, so each route's declared errors
 * stay exact.
 */
export interface SubmitSource<E> {
  /** What a replay is scoped to, given the caller's checked `Idempotency-Key`. */
  readonly idempotency: (caller: Caller, key: string | undefined) => Idempotency | undefined
  /** After the option checks: the source's own checks, the duration and the credit check; then its row fields. */
  readonly prepare: (caller: Caller, base: string) => Effect.Effect<SourceMedia, E | PaymentRequired>
  /** Removes what the path stored for a job that is not created. */
  readonly release: Effect.Effect<void>
  /** Runs once the job exists (or was found as a replay). */
  readonly admitted: Effect.Effect<void>
}

/** A direct upload's commit: the ticket it names and the options the client echoes back. */
export interface CommitTicketRequest {
  readonly caller: AccountCaller
  readonly jobId: JobId
  readonly objectKey: string
  readonly options: Readonly<Record<string, unknown>>
  readonly originalFilename: string | undefined
  readonly base: string
}

export interface SubmitRequest<E> {
  readonly caller: Caller
  readonly source: SubmitSource<E>
  readonly options: SubmitOptions
  /** The `Idempotency-Key` header, already checked (`Admission.checkIdempotencyKey`). */
  readonly idempotencyKey: string | undefined
  /** The public root for pay links in a 402. */
  readonly base: string
  /** Where the options sit in the request, for 422 `loc`s (`["body"]` unless given). */
  readonly at?: ReadonlyArray<string> | undefined
}

/** What the option checks found: the resolved speaker bounds and the usable webhook URL. */
export interface CheckedOptions {
  readonly speakers: SpeakerHints
  readonly webhookUrl: string | null
}

/** What any submit may be refused with, whatever its source. */
export type SubmitError = ConcurrencyLimit | PaymentRequired | RateLimited | TierForbidden | ValidationFailed

/** The one job builder: absent options take `submitDefaults`; `source` the source's own default. */
export const newJob = (media: SourceMedia, options: SubmitOptions, checked: CheckedOptions): AdmitRequest["job"] => {
  const { defaultSource, ...row } = media
  return {
    ...row,
    source: options.source ?? defaultSource,
    language: options.language ?? submitDefaults.language,
    diarize: options.diarize ?? submitDefaults.diarize,
    minSpeakers: checked.speakers.minSpeakers,
    maxSpeakers: checked.speakers.maxSpeakers,
    wordTimestamps: options.word_timestamps ?? submitDefaults.word_timestamps,
    prompt: options.prompt ?? null,
    task: options.task ?? submitDefaults.task,
    webhookUrl: checked.webhookUrl
  }
}

/** Key order does not matter when comparing echoed options (jsonb reorders keys). */
const canonical = (value: unknown): string =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`
    : JSON.stringify(value)

/** A direct-upload ticket's stored options: the submit options with their defaults applied and hints resolved. */
const ticketOptions = (options: SubmitOptions, speakers: SpeakerHints): TicketOptions => ({
  language: options.language ?? submitDefaults.language,
  diarize: options.diarize ?? submitDefaults.diarize,
  ...(speakers.minSpeakers === null ? {} : { min_speakers: speakers.minSpeakers }),
  ...(speakers.maxSpeakers === null ? {} : { max_speakers: speakers.maxSpeakers }),
  word_timestamps: options.word_timestamps ?? submitDefaults.word_timestamps,
  source: options.source ?? "upload",
  ...(options.prompt === undefined ? {} : { prompt: options.prompt }),
  ...(options.task === undefined ? {} : { task: options.task }),
  ...(options.webhook_url === undefined ? {} : { webhook_url: options.webhook_url })
})

export class SubmitJob extends Context.Service<SubmitJob, {
  /**
   * Accept → write → sniff for one multipart file, under `jobId`'s key: 415 for a name or type
   * not taken, 413 past 5 GB, 415 BAD_MIME for stored bytes that are not media. On any failure
   * (or interruption) nothing stays stored.
   */
  storeUpload<E>(
    jobId: JobId,
    file: { readonly name: string; readonly contentType: string },
    content: Stream.Stream<Uint8Array, E>
  ): Effect.Effect<StoredUpload, E | FileTooLarge | UnsupportedMedia | ValidationFailed>
  /**
   * A multipart file stored by `storeUpload`; `release` removes it when no job is created. A form
   * without a file fails with `missing` (the route's own refusal) after the option checks.
   */
  upload<M>(
    jobId: JobId,
    file: StoredUpload | undefined,
    release: Effect.Effect<void>,
    missing: M
  ): SubmitSource<FileTooLarge | M>
  /** A public link: resolved after the credit check, so a refusal (400) charges nothing. */
  link(url: string): SubmitSource<LinkRefusedError>
  /**
   * The second half of a direct upload (`commit`): the caller's own ticket (404, 409 for another
   * object key or account), its options echoed unchanged (422), its bytes arrived and still
   * stored (410 / 409 otherwise; lost bytes may be sent again), then the submit with the ticket's
   * options, checked again as the model may have changed since `init`. A committed ticket
   * answers its job as a replay; two commits racing for one ticket create one job.
   */
  commitTicket(request: CommitTicketRequest): Effect.Effect<
    Admitted,
    FileTooLarge | KeyMismatch | NotFound | SubmitError | UnsupportedMedia | UploadExpired | UploadIncomplete
  >
  /**
   * The first half of a direct upload (`uploads/init`): accept the name and type, refuse a size
   * over 5 GB, check the options and the balance as a submit does, then issue a ticket holding
   * the options resolved (`ticketOptions`). An `Idempotency-Key` used before answers that earlier
   * ticket (`replay: true`) while it exists.
   */
  openTicket(request: {
    readonly caller: AccountCaller
    readonly file: { readonly filename: string; readonly sizeBytes: number; readonly contentType: string }
    readonly options: SubmitOptions
    readonly idempotencyKey: string | undefined
    readonly base: string
  }): Effect.Effect<
    { readonly ticket: UploadTicketRecord; readonly replay: boolean },
    FileTooLarge | PaymentRequired | TierForbidden | UnsupportedMedia | ValidationFailed
  >
  /** The chain after the bytes are stored (see the module comment): the admitted job or a refusal. */
  submit<E>(request: SubmitRequest<E>): Effect.Effect<Admitted, E | SubmitError>
}>()("verbatim/intake/SubmitJob") {
  static readonly layer = Layer.effect(
    SubmitJob,
    Effect.gen(function*() {
      const admission = yield* Admission
      const intake = yield* MediaIntake
      const storage = yield* MediaStorage
      const resolver = yield* LinkResolver
      const tickets = yield* UploadTickets
      const keys = yield* IdempotencyKeys
      const store = yield* JobStore

      const storeUpload = Effect.fn("SubmitJob.storeUpload")(
        function*<E>(
          jobId: JobId,
          file: { readonly name: string; readonly contentType: string },
          content: Stream.Stream<Uint8Array, E>
        ) {
          const extension = yield* intake.accept(file.name, file.contentType)
          const key = mediaKeys.original(jobId, extension)
          return yield* Effect.gen(function*() {
            const { bytes } = yield* storage.write(key, content, maxFileBytes).pipe(
              Effect.catchTag("ObjectTooLarge", () => Effect.fail(fileTooLarge()))
            )
            const mediaType = yield* intake.sniff(key, { filename: file.name, declared: file.contentType })
            return { key, name: file.name, contentType: file.contentType, bytes, mediaType } satisfies StoredUpload
          }).pipe(Effect.onError(() => storage.remove(key)))
        }
      )

      const upload = <M>(
        jobId: JobId,
        file: StoredUpload | undefined,
        release: Effect.Effect<void>,
        missing: M
      ): SubmitSource<FileTooLarge | M> => ({
        idempotency: (caller, key) => idempotencyFor(caller, key, "transcribe"),
        prepare: Effect.fnUntraced(function*(caller, base) {
          if (file === undefined) return yield* Effect.fail(missing)
          const duration = yield* intake.checkDuration(file.key)
          yield* admission.creditCheck(caller, duration, base)
          return {
            id: jobId,
            defaultSource: "upload",
            inputKind: "upload",
            filename: file.name,
            objectKey: file.key,
            sizeBytes: file.bytes,
            contentType: file.contentType,
            mediaType: file.mediaType,
            inputUrl: null,
            resolvedMedia: null
          } satisfies SourceMedia
        }),
        release,
        admitted: Effect.void
      })

      const link = (url: string): SubmitSource<LinkRefusedError> => ({
        idempotency: (caller, key) => idempotencyFor(caller, key, "transcribe_url"),
        prepare: Effect.fnUntraced(function*(caller, base) {
          yield* admission.creditCheck(caller, undefined, base)
          const resolved = yield* resolver.resolve(url).pipe(
            Effect.catchTag("LinkRefused", (refused) =>
              Effect.fail(new LinkRefusedError({ error: refused.message, code: refused.code })))
          )
          return {
            id: JobId.make(crypto.randomUUID()),
            defaultSource: "url",
            inputKind: "url",
            filename: resolved.filename ?? resolved.title ?? null,
            objectKey: null,
            sizeBytes: resolved.sizeBytes ?? null,
            contentType: resolved.contentType ?? null,
            mediaType: null,
            inputUrl: url,
            resolvedMedia: resolved
          } satisfies SourceMedia
        }),
        release: Effect.void,
        admitted: Effect.void
      })

      /**
       * A ticket being committed: its bytes must have arrived and still be stored (410 / 409
       * otherwise, the ticket taking them again), then sniff and duration. Two commits racing for
       * one ticket create one job (the second is a replay); the ticket is marked committed.
       */
      const direct = (
        ticket: UploadTicketRecord,
        filename: string
      ): SubmitSource<FileTooLarge | UnsupportedMedia | UploadExpired | UploadIncomplete> => ({
        idempotency: () => ({ scope: `upload:${ticket.job_id}`, key: "commit", operation: "uploads_commit" }),
        prepare: Effect.fnUntraced(function*(caller, base) {
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
            yield* tickets.reset(ticket.job_id)
            return yield* new UploadIncomplete({
              error: "The uploaded bytes are no longer stored: send them to upload_url again, then commit.",
              code: "UPLOAD_MISSING",
              expected_bytes: ticket.size_bytes,
              received_bytes: null
            })
          }
          const mediaType = yield* intake.sniff(ticket.object_key, { filename, declared: ticket.content_type })
          const duration = yield* intake.checkDuration(ticket.object_key)
          yield* admission.creditCheck(caller, duration, base)
          return {
            id: ticket.job_id,
            defaultSource: "upload",
            inputKind: "direct",
            filename,
            objectKey: ticket.object_key,
            sizeBytes: ticket.size_bytes,
            contentType: ticket.content_type,
            mediaType,
            inputUrl: null,
            resolvedMedia: null
          } satisfies SourceMedia
        }),
        release: Effect.void,
        admitted: tickets.committed(ticket.job_id)
      })

      const openTicket = Effect.fn("SubmitJob.openTicket")(function*(request: {
        readonly caller: AccountCaller
        readonly file: { readonly filename: string; readonly sizeBytes: number; readonly contentType: string }
        readonly options: SubmitOptions
        readonly idempotencyKey: string | undefined
        readonly base: string
      }) {
        const { caller, file } = request
        const extension = yield* intake.accept(file.filename, file.contentType)
        if (file.sizeBytes > maxFileBytes) return yield* fileTooLarge()
        const { speakers } = yield* checkOptions(caller, request.options)
        yield* admission.creditCheck(caller, undefined, request.base)
        const jobId = JobId.make(crypto.randomUUID())
        const idempotency = idempotencyFor(caller, request.idempotencyKey, "uploads_init")
        if (idempotency !== undefined) {
          const earlier = yield* keys.reserve(idempotency, jobId)
          if (Option.isSome(earlier)) {
            const ticket = yield* tickets.get(earlier.value)
            if (Option.isSome(ticket)) return { ticket: ticket.value, replay: true }
          }
        }
        const ticket = yield* tickets.create({
          jobId,
          accountId: caller.account.id,
          apiKeyId: caller.keyId,
          objectKey: mediaKeys.directUpload(jobId, extension),
          filename: file.filename,
          sizeBytes: file.sizeBytes,
          contentType: file.contentType,
          // Stored resolved (speakers_expected as both bounds); commit echoes them unchanged.
          options: ticketOptions(request.options, speakers)
        })
        return { ticket, replay: false }
      })

      /**
       * The checks of the options alone, as every submit and `uploads/init` make them: language
       * for the configured model, speaker hints, task, prompt length, then the webhook rule.
       */
      const checkOptions = Effect.fn("SubmitJob.checkOptions")(
        function*(caller: Caller, options: SubmitOptions, at: ReadonlyArray<string> = ["body"]) {
          yield* admission.checkLanguage(options.language, [...at, "language"])
          const speakers = yield* checkSpeakerHints(options, at)
          yield* admission.checkTask(options.task, [...at, "task"])
          yield* admission.checkPrompt(options.prompt, [...at, "prompt"])
          const webhookUrl = yield* admission.checkWebhook(caller, options.webhook_url)
          return { speakers, webhookUrl } satisfies CheckedOptions
        }
      )

      const submit = Effect.fn("SubmitJob.submit")(function*<E>(request: SubmitRequest<E>) {
        const { caller, source } = request
        const { checked, media } = yield* Effect.gen(function*() {
          const checked = yield* checkOptions(caller, request.options, request.at)
          const media = yield* source.prepare(caller, request.base)
          return { checked, media }
        }).pipe(Effect.tapError(() => source.release))
        const admitted = yield* admission.admit({
          caller,
          idempotency: source.idempotency(caller, request.idempotencyKey),
          release: source.release,
          job: newJob(media, request.options, checked)
        })
        yield* source.admitted
        return admitted
      })

      const commitTicket = Effect.fn("SubmitJob.commitTicket")(function*(request: CommitTicketRequest) {
        const { caller, jobId } = request
        const found = yield* tickets.get(jobId)
        if (Option.isNone(found)) return yield* new NotFound({ error: "No upload ticket has this job id." })
        const ticket = found.value
        if (ticket.account_id !== caller.account.id || ticket.object_key !== request.objectKey) {
          return yield* new KeyMismatch({ error: "This object_key does not belong to this job and caller." })
        }
        if (ticket.committed_at !== null) {
          const job = yield* store.get(jobId)
          if (Option.isSome(job)) return { answer: { job_id: job.value.id, status: job.value.status }, replay: true }
        }
        if (canonical(request.options) !== canonical(ticket.options)) {
          return yield* new ValidationFailed({
            error: "`options` must be the ticket's options, unchanged.",
            code: "VALIDATION_FAILED",
            detail: [{ loc: ["body", "options"], msg: "Differs from the upload ticket" }]
          })
        }
        return yield* submit({
          caller,
          source: direct(ticket, request.originalFilename ?? ticket.filename),
          options: ticket.options,
          idempotencyKey: undefined,
          base: request.base,
          at: ["body", "options"]
        })
      })

      return SubmitJob.of({ storeUpload, upload, link, openTicket, commitTicket, submit })
    })
  )
}
