/**
 * The `speaker_names` table (migration 0013): names a person gave a job's diarization labels.
 * Read on every render, insights answer and search page that shows the job, so reads are one
 * statement (`forJobs` for a page of search hits).
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { JobId } from "../../src/contract/domain/Ids.ts"

/** Label (`SPEAKER_00`) → the name a person gave it. */
export type SpeakerNameMap = ReadonlyMap<string, string>

export interface SpeakerNameChange {
  readonly label: string
  /** null forgets the label's name. */
  readonly name: string | null
}

export const noNames: SpeakerNameMap = new Map()

export class SpeakerNameStore extends Context.Service<SpeakerNameStore, {
  get(jobId: JobId): Effect.Effect<SpeakerNameMap>
  forJobs(jobIds: ReadonlyArray<JobId>): Effect.Effect<ReadonlyMap<string, SpeakerNameMap>>
  /** Applies the changes together (one transaction). */
  set(jobId: JobId, changes: ReadonlyArray<SpeakerNameChange>): Effect.Effect<void>
}>()("verbatim/speakers/SpeakerNameStore") {
  static readonly layer = Layer.effect(
    SpeakerNameStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const forJobs = Effect.fn("SpeakerNameStore.forJobs")(function*(jobIds: ReadonlyArray<JobId>) {
        const out = new Map<string, Map<string, string>>()
        if (jobIds.length === 0) return out
        const rows = yield* sql<{ job_id: string; label: string; name: string }>`SELECT job_id, label, name
          FROM speaker_names WHERE job_id IN ${sql.in(jobIds)}`.pipe(Effect.orDie)
        for (const row of rows) {
          const names = out.get(row.job_id) ?? new Map<string, string>()
          names.set(row.label, row.name)
          out.set(row.job_id, names)
        }
        return out
      })

      const get = Effect.fn("SpeakerNameStore.get")(function*(jobId: JobId) {
        return (yield* forJobs([jobId])).get(jobId) ?? noNames
      })

      const set = Effect.fn("SpeakerNameStore.set")(function*(jobId: JobId, changes: ReadonlyArray<SpeakerNameChange>) {
        const at = new Date(yield* Clock.currentTimeMillis)
        yield* sql.withTransaction(Effect.forEach(changes, (change) =>
          change.name === null
            ? sql`DELETE FROM speaker_names WHERE job_id = ${jobId} AND label = ${change.label}`
            : sql`INSERT INTO speaker_names (job_id, label, name, updated_at)
                VALUES (${jobId}, ${change.label}, ${change.name}, ${at})
                ON CONFLICT (job_id, label) DO UPDATE SET name = EXCLUDED.name, updated_at = EXCLUDED.updated_at`, {
          discard: true
        })).pipe(Effect.orDie)
      })

      return SpeakerNameStore.of({ get, forJobs, set })
    })
  )
}
