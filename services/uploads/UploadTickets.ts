/**
 * Direct-upload tickets: `init` records what the caller will send (name, size, options)
 * and where it goes; the bytes arrive at a signed URL; `commit` turns the ticket into a
 * queued job. A ticket lives 24 hours; its upload URL far less (see the handler).
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { SubmitOptions } from "../../src/contract/api/JobsApi.ts"
import { AccountId, ApiKeyId, JobId } from "../../src/contract/domain/Ids.ts"
import { JobSource } from "../../src/contract/domain/Job.ts"
import { Language } from "../../src/contract/domain/Languages.ts"
import { numbersFromBigInt } from "../db/BigIntColumns.ts"

export const ticketLifetimeMs = 24 * 3600 * 1000

const { speakers_expected: _expected, ...optionFields } = SubmitOptions.fields

/**
 * A ticket's options as `init` stored them and `commit` must get them back: the submit options
 * with their defaults applied (language, diarize, word_timestamps, source) and the speaker hints
 * resolved (`speakers_expected` is stored as both bounds). Read back through this Schema.
 */
export const TicketOptions = Schema.Struct({
  ...optionFields,
  language: Language,
  diarize: Schema.Boolean,
  word_timestamps: Schema.Boolean,
  source: JobSource
})
export type TicketOptions = typeof TicketOptions.Type

export const UploadTicketRecord = Schema.Struct({
  job_id: JobId,
  account_id: AccountId,
  api_key_id: Schema.NullOr(ApiKeyId),
  object_key: Schema.String,
  filename: Schema.String,
  size_bytes: Schema.Union([Schema.Number, Schema.NumberFromString]),
  content_type: Schema.String,
  options: TicketOptions,
  expires_at: Schema.Date,
  received_bytes: Schema.NullOr(Schema.Union([Schema.Number, Schema.NumberFromString])),
  committed_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date
})
export type UploadTicketRecord = typeof UploadTicketRecord.Type

const decodeTicket = Schema.decodeUnknownEffect(UploadTicketRecord)
const encodeOptions = Schema.encodeUnknownEffect(TicketOptions)

export interface NewTicket {
  readonly jobId: JobId
  readonly accountId: AccountId
  /** Null when a signed-in user (website session) asked for the ticket. */
  readonly apiKeyId: ApiKeyId | null
  readonly objectKey: string
  readonly filename: string
  readonly sizeBytes: number
  readonly contentType: string
  /** Checked against `TicketOptions` before it is stored (one that does not fit is a defect of the caller). */
  readonly options: TicketOptions | Readonly<Record<string, unknown>>
}

export class UploadTickets extends Context.Service<UploadTickets, {
  create(ticket: NewTicket): Effect.Effect<UploadTicketRecord>
  get(jobId: JobId): Effect.Effect<Option.Option<UploadTicketRecord>>
  received(jobId: JobId, bytes: number): Effect.Effect<void>
  /** Forgets received bytes (their object is gone), so the upload URL takes them again. */
  reset(jobId: JobId): Effect.Effect<void>
  committed(jobId: JobId): Effect.Effect<void>
  /** Drops tickets never committed within their lifetime; returns their object keys. */
  readonly purgeAbandoned: Effect.Effect<ReadonlyArray<string>>
}>()("verbatim/uploads/UploadTickets") {
  static readonly layer = Layer.effect(
    UploadTickets,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decodeOne = (rows: ReadonlyArray<unknown>) =>
        Effect.map(Effect.forEach(rows, (row) => decodeTicket(numbersFromBigInt(row))), (tickets) => Option.fromNullishOr(tickets[0]))
          .pipe(Effect.orDie)

      const create = Effect.fn("UploadTickets.create")(function*(ticket: NewTicket) {
        const now = yield* Clock.currentTimeMillis
        const options = yield* encodeOptions(ticket.options).pipe(Effect.orDie)
        const rows = yield* sql`INSERT INTO upload_tickets ${
          sql.insert({
            job_id: ticket.jobId,
            account_id: ticket.accountId,
            api_key_id: ticket.apiKeyId,
            object_key: ticket.objectKey,
            filename: ticket.filename,
            size_bytes: ticket.sizeBytes,
            content_type: ticket.contentType,
            options: JSON.stringify(options),
            expires_at: new Date(now + ticketLifetimeMs),
            created_at: new Date(now)
          })
        } RETURNING *`.pipe(Effect.orDie)
        return Option.getOrThrow(yield* decodeOne(rows))
      })

      const get = Effect.fn("UploadTickets.get")(function*(jobId: JobId) {
        return yield* decodeOne(yield* sql`SELECT * FROM upload_tickets WHERE job_id = ${jobId}`.pipe(Effect.orDie))
      })

      const received = Effect.fn("UploadTickets.received")(function*(jobId: JobId, bytes: number) {
        yield* sql`UPDATE upload_tickets SET received_bytes = ${bytes} WHERE job_id = ${jobId}`.pipe(Effect.orDie)
      })

      const reset = Effect.fn("UploadTickets.reset")(function*(jobId: JobId) {
        yield* sql`UPDATE upload_tickets SET received_bytes = NULL WHERE job_id = ${jobId} AND committed_at IS NULL`.pipe(
          Effect.orDie
        )
      })

      const committed = Effect.fn("UploadTickets.committed")(function*(jobId: JobId) {
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* sql`UPDATE upload_tickets SET committed_at = COALESCE(committed_at, ${now}) WHERE job_id = ${jobId}`.pipe(
          Effect.orDie
        )
      })

      const purgeAbandoned = Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const rows = yield* sql<{ object_key: string }>`DELETE FROM upload_tickets
          WHERE committed_at IS NULL AND expires_at <= ${now} RETURNING object_key`.pipe(Effect.orDie)
        return rows.map((row) => row.object_key)
      }).pipe(Effect.withSpan("UploadTickets.purgeAbandoned"))

      return UploadTickets.of({ create, get, received, reset, committed, purgeAbandoned })
    })
  )
}
