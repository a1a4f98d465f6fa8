/**
 * Stored transcripts, one per job: written by the run that completes the job (inside its
 * transaction), replaced by a correction (which appends a `changed` job event in the same
 * transaction), decoded with the contract's Schema on the way out.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { AccountId, JobId } from "../../src/contract/domain/Ids.ts"
import { Transcript } from "../../src/contract/domain/Transcript.ts"
import { JobEventLog } from "../work/JobEventLog.ts"

const decodeBody = Schema.decodeUnknownEffect(Schema.Union([Transcript, Schema.fromJsonString(Transcript)]))

export class TranscriptStore extends Context.Service<TranscriptStore, {
  get(id: JobId): Effect.Effect<Option.Option<Transcript>>
  /** A run's transcript (first or again); joins the caller's transaction. */
  put(id: JobId, transcript: Transcript): Effect.Effect<void>
  /** A correction of a stored transcript. */
  save(id: JobId, transcript: Transcript): Effect.Effect<void>
}>()("verbatim/jobs/TranscriptStore") {
  static readonly layer = Layer.effect(
    TranscriptStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const log = yield* JobEventLog

      const get = Effect.fn("TranscriptStore.get")(function*(id: JobId) {
        const [row] = yield* sql<{ body: unknown }>`SELECT body FROM transcripts WHERE job_id = ${id}`.pipe(Effect.orDie)
        if (row === undefined) return Option.none<Transcript>()
        return Option.some(yield* decodeBody(row.body).pipe(Effect.orDie))
      })

      const put = Effect.fn("TranscriptStore.put")(function*(id: JobId, transcript: Transcript) {
        yield* sql`INSERT INTO transcripts (job_id, body) VALUES (${id}, ${JSON.stringify(transcript)}::jsonb)
          ON CONFLICT (job_id) DO UPDATE SET body = EXCLUDED.body, corrected_at = NULL`.pipe(Effect.orDie)
      })

      const save = Effect.fn("TranscriptStore.save")(function*(id: JobId, transcript: Transcript) {
        yield* sql.withTransaction(Effect.gen(function*() {
          const at = new Date(yield* Clock.currentTimeMillis)
          yield* sql`UPDATE transcripts SET body = ${JSON.stringify(transcript)}::jsonb, corrected_at = ${at}
            WHERE job_id = ${id}`
          const jobs = yield* sql<{ id: JobId; account_id: AccountId | null }>`SELECT id, account_id FROM jobs WHERE id = ${id}`
          yield* log.append("changed", jobs)
        })).pipe(Effect.orDie)
      })

      return TranscriptStore.of({ get, put, save })
    })
  )
}
