/**
 * The `job_insights` table: the stored insights of one job (migration 0008). A row is written
 * once per transcript version by the `insights` task — the payload when generation succeeded,
 * or `no_speech` when the transcript had too few words — and carries the SHA-256 of the
 * transcript it was made from: a row whose hash is not the current transcript's is stale and
 * never served. A failed generation writes nothing, so there is never a half-written row.
 *
 * The hash also covers `GENERATOR_VERSION`, so rows made by an older generator (a `no_speech`
 * under an older word bound, payloads without newer fields) are stale after an upgrade and made
 * again on the next request; a stored payload that no longer decodes counts as no row.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { Insights } from "../../src/contract/domain/Insights.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"

/** What a generation found: the insights, or too little speech (with the word count). */
export type InsightsOutcome =
  | { readonly _tag: "Done"; readonly insights: Insights }
  | { readonly _tag: "NoSpeech"; readonly words: number }

export interface StoredInsights {
  readonly transcriptHash: string
  readonly outcome: InsightsOutcome
  readonly generatedAt: Date
}

const Row = Schema.Struct({
  transcript_hash: Schema.String,
  status: Schema.Literals(["done", "no_speech"]),
  payload: Schema.NullOr(Schema.Unknown),
  words: Schema.Int,
  generated_at: Schema.Date
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))
const decodePayload = Schema.decodeUnknownOption(Schema.Union([Insights, Schema.fromJsonString(Insights)]))

/**
 * Changes whenever what the generator makes for one transcript changes (2: insights from 3 words
 * on, speaker name confidence and evidence; 3: summaries weighed for content, topics without
 * names or units, quotes without reaction openings).
 */
export const GENERATOR_VERSION = 3

/** Identifies a transcript version and the generator version: any correction or upgrade changes it. */
export const transcriptHash = (transcript: Transcript) =>
  createHash("sha256").update(`insights v${GENERATOR_VERSION}\n`).update(JSON.stringify(transcript)).digest("base64url")

export class InsightsStore extends Context.Service<InsightsStore, {
  get(jobId: JobId): Effect.Effect<Option.Option<StoredInsights>>
  /**
   * Stores the outcome for the transcript `hash`, replacing an older row; false when the job
   * is gone or deleted meanwhile (nothing is stored for it).
   */
  put(jobId: JobId, hash: string, outcome: InsightsOutcome, generationMs: number): Effect.Effect<boolean>
  /**
   * Forgets the job's insights (transcript corrected, job deleted); with `keepHash`, only when
   * they were made from another transcript than that one.
   */
  remove(jobId: JobId, keepHash?: string): Effect.Effect<void>
}>()("verbatim/insights/InsightsStore") {
  static readonly layer = Layer.effect(
    InsightsStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const get = Effect.fn("InsightsStore.get")(function*(jobId: JobId) {
        const rows = yield* sql`SELECT transcript_hash, status, payload, words, generated_at
          FROM job_insights WHERE job_id = ${jobId}`.pipe(Effect.flatMap(decodeRows), Effect.orDie)
        const row = rows[0]
        if (row === undefined) return Option.none<StoredInsights>()
        let outcome: InsightsOutcome = { _tag: "NoSpeech", words: row.words }
        if (row.status === "done") {
          const insights = decodePayload(row.payload)
          // Written by an older generator in a shape this one no longer reads: as if absent.
          if (Option.isNone(insights)) return Option.none<StoredInsights>()
          outcome = { _tag: "Done", insights: insights.value }
        }
        return Option.some<StoredInsights>({ transcriptHash: row.transcript_hash, outcome, generatedAt: row.generated_at })
      })

      const put = Effect.fn("InsightsStore.put")(function*(jobId: JobId, hash: string, outcome: InsightsOutcome, generationMs: number) {
        const at = new Date(yield* Clock.currentTimeMillis)
        const payload = outcome._tag === "Done" ? JSON.stringify(outcome.insights) : null
        const words = outcome._tag === "Done" ? 0 : outcome.words
        const status = outcome._tag === "Done" ? "done" : "no_speech"
        const rows = yield* sql`INSERT INTO job_insights (job_id, transcript_hash, status, payload, words, generation_ms, generated_at)
          SELECT ${jobId}, ${hash}, ${status}, ${payload}::jsonb, ${words}, ${Math.round(generationMs)}, ${at}
          FROM jobs WHERE id = ${jobId} AND deleted_at IS NULL
          ON CONFLICT (job_id) DO UPDATE SET transcript_hash = EXCLUDED.transcript_hash, status = EXCLUDED.status,
            payload = EXCLUDED.payload, words = EXCLUDED.words, generation_ms = EXCLUDED.generation_ms,
            generated_at = EXCLUDED.generated_at
          RETURNING job_id`.pipe(Effect.orDie)
        return rows.length > 0
      })

      const remove = Effect.fn("InsightsStore.remove")(function*(jobId: JobId, keepHash?: string) {
        yield* (keepHash === undefined
          ? sql`DELETE FROM job_insights WHERE job_id = ${jobId}`
          : sql`DELETE FROM job_insights WHERE job_id = ${jobId} AND transcript_hash <> ${keepHash}`).pipe(Effect.orDie)
      })

      return InsightsStore.of({ get, put, remove })
    })
  )
}
