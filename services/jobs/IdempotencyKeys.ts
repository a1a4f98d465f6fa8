/**
 * `Idempotency-Key` bookkeeping: a key (per API key, or per keyless client) names the
 * first job created with it. Statements join the caller's transaction, so job creation
 * takes the key and inserts the job atomically (see `JobStore.create`).
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { decodeJobRows } from "./JobRecord.ts"
import type { JobRecord } from "./JobRecord.ts"

export interface Idempotency {
  /** Per API key (or per keyless client). */
  readonly scope: string
  readonly key: string
  readonly operation: string
}

export class IdempotencyKeys extends Context.Service<IdempotencyKeys, {
  /** Takes `idempotency` for `jobId`; Some(earlier job id) when the key was used before. */
  reserve(idempotency: Idempotency, jobId: JobId): Effect.Effect<Option.Option<JobId>>
  /** Points a key whose job was purged at `jobId`. */
  repoint(idempotency: Idempotency, jobId: JobId): Effect.Effect<void>
  /** The job a key names, if it still exists (deleted ones included). */
  find(scope: string, key: string): Effect.Effect<Option.Option<JobRecord>>
}>()("verbatim/jobs/IdempotencyKeys") {
  static readonly layer = Layer.effect(
    IdempotencyKeys,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

      const reserve = Effect.fn("IdempotencyKeys.reserve")(function*(idempotency: Idempotency, jobId: JobId) {
        const at = yield* now
        const claimed = yield* sql`INSERT INTO idempotency_keys (scope, key, operation, job_id, created_at)
          VALUES (${idempotency.scope}, ${idempotency.key}, ${idempotency.operation}, ${jobId}, ${at})
          ON CONFLICT (scope, key) DO NOTHING RETURNING job_id`.pipe(Effect.orDie)
        if (claimed.length > 0) return Option.none<JobId>()
        const [row] = yield* sql<{ job_id: JobId }>`SELECT job_id FROM idempotency_keys
          WHERE scope = ${idempotency.scope} AND key = ${idempotency.key}`.pipe(Effect.orDie)
        return Option.fromNullishOr(row?.job_id)
      })

      const repoint = Effect.fn("IdempotencyKeys.repoint")(function*(idempotency: Idempotency, jobId: JobId) {
        const at = yield* now
        yield* sql`UPDATE idempotency_keys SET job_id = ${jobId}, created_at = ${at}
          WHERE scope = ${idempotency.scope} AND key = ${idempotency.key}`.pipe(Effect.orDie)
      })

      const find = Effect.fn("IdempotencyKeys.find")(function*(scope: string, key: string) {
        const rows = yield* sql`SELECT j.* FROM idempotency_keys k JOIN jobs j ON j.id = k.job_id
          WHERE k.scope = ${scope} AND k.key = ${key}`.pipe(Effect.orDie)
        return Option.fromNullishOr((yield* decodeJobRows(rows))[0])
      })

      return IdempotencyKeys.of({ reserve, repoint, find })
    })
  )
}
