/** A job as stored (one row of `jobs`), decoded once at the store's edge. */
import { Effect, Schema } from "effect"
import { AccountId, ApiKeyId, JobId } from "../../src/contract/domain/Ids.ts"
import { JobErrorCode, JobSource, JobStatus } from "../../src/contract/domain/Job.ts"
import { numbersFromBigInt } from "../db/BigIntColumns.ts"
import { ResolvedMedia } from "../links/LinkResolver.ts"

const BigIntNumber = Schema.Union([Schema.Number, Schema.NumberFromString])

export const JobRecord = Schema.Struct({
  id: JobId,
  account_id: Schema.NullOr(AccountId),
  api_key_id: Schema.NullOr(ApiKeyId),
  guest_client: Schema.NullOr(Schema.String),
  claim_hash: Schema.NullOr(Schema.String),
  status: JobStatus,
  source: JobSource,
  input_kind: Schema.Literals(["upload", "url", "direct"]),
  filename: Schema.NullOr(Schema.String),
  object_key: Schema.NullOr(Schema.String),
  size_bytes: Schema.NullOr(BigIntNumber),
  content_type: Schema.NullOr(Schema.String),
  /** The type playback serves, sniffed when the media was accepted; null on rows from before (sniffed on first play). */
  media_type: Schema.NullOr(Schema.String),
  input_url: Schema.NullOr(Schema.String),
  /** jsonb arrives parsed from Postgres; as text from drivers that do not parse it. */
  resolved_media: Schema.NullOr(Schema.Union([ResolvedMedia, Schema.fromJsonString(ResolvedMedia)])),
  language_requested: Schema.String,
  diarize: Schema.Boolean,
  /** Speaker hints for diarization (`min_speakers` / `max_speakers`); null without a bound. */
  min_speakers: Schema.NullOr(Schema.Int),
  max_speakers: Schema.NullOr(Schema.Int),
  /** How diarization ended (`done`/`failed`); null before, and without `diarize`. */
  diarization: Schema.NullOr(Schema.Literals(["done", "failed"])),
  word_timestamps: Schema.Boolean,
  /** Names and terms for the model (Whisper's previous-text prompt); null without one. */
  prompt: Schema.NullOr(Schema.String),
  task: Schema.Literals(["transcribe", "translate"]),
  webhook_url: Schema.NullOr(Schema.String),
  progress: Schema.Number,
  audio_duration_seconds: Schema.NullOr(Schema.Number),
  language: Schema.NullOr(Schema.String),
  speech_detected: Schema.NullOr(Schema.Boolean),
  speech_ratio: Schema.NullOr(Schema.Number),
  locked: Schema.Boolean,
  error: Schema.NullOr(Schema.String),
  error_code: Schema.NullOr(JobErrorCode),
  retryable: Schema.NullOr(Schema.Boolean),
  attempts: Schema.Int,
  run_token: Schema.NullOr(Schema.String),
  heartbeat_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date,
  started_at: Schema.NullOr(Schema.Date),
  completed_at: Schema.NullOr(Schema.Date),
  deleted_at: Schema.NullOr(Schema.Date),
  purged_at: Schema.NullOr(Schema.Date)
})
export type JobRecord = typeof JobRecord.Type

/** What a submit path knows about a new job. */
export interface NewJob {
  readonly id: JobId
  readonly accountId: AccountId | null
  readonly apiKeyId: ApiKeyId | null
  readonly guestClient: string | null
  readonly claimHash: string | null
  readonly source: JobSource
  readonly inputKind: "upload" | "url" | "direct"
  readonly filename: string | null
  readonly objectKey: string | null
  readonly sizeBytes: number | null
  readonly contentType: string | null
  /** What playback serves the stored media as (see `MediaType`); absent until the media is stored (links). */
  readonly mediaType?: string | null | undefined
  readonly inputUrl: string | null
  readonly resolvedMedia: ResolvedMedia | null
  readonly language: string
  readonly diarize: boolean
  /** Speaker hints (see SpeakerHints); absent or null: no bound. */
  readonly minSpeakers?: number | null | undefined
  readonly maxSpeakers?: number | null | undefined
  readonly wordTimestamps: boolean
  readonly prompt?: string | null | undefined
  readonly task?: "transcribe" | "translate" | undefined
  readonly webhookUrl: string | null
}

const decodeJobs = Schema.decodeUnknownEffect(Schema.Array(JobRecord))

/** Rows of `jobs` (SELECT *) → records; a row that does not decode is a defect. */
export const decodeJobRows = (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<JobRecord>> =>
  decodeJobs(rows.map(numbersFromBigInt)).pipe(Effect.orDie)
