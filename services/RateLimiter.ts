/**
 * Request-rate limits shared by every process on one Postgres: a generic cell rate
 * algorithm (GCRA) whose whole state is one `tat` (theoretical arrival time) per bucket,
 * advanced by a single conditional upsert. `limit` requests may arrive at once, then one
 * every `60 s / limit`; there is no window edge where twice the limit gets through.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

export type RateDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number }

const periodMs = 60_000

export class RateLimiter extends Context.Service<RateLimiter, {
  /** Counts one request against `bucket` allowing `limitPerMinute`. */
  consume(bucket: string, limitPerMinute: number): Effect.Effect<RateDecision>
}>()("verbatim/limits/RateLimiter") {
  static readonly layer = Layer.effect(
    RateLimiter,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const consume = Effect.fn("RateLimiter.consume")(function*(bucket: string, limitPerMinute: number) {
        const now = yield* Clock.currentTimeMillis
        const interval = Math.ceil(periodMs / limitPerMinute)
        const rows = yield* sql<{ tat: string }>`
          INSERT INTO rate_limits (bucket, tat) VALUES (${bucket}, ${now + interval}::bigint)
          ON CONFLICT (bucket) DO UPDATE
            SET tat = GREATEST(rate_limits.tat, ${now}::bigint) + ${interval}::bigint
            WHERE GREATEST(rate_limits.tat, ${now}::bigint) + ${interval}::bigint - ${now}::bigint <= ${periodMs}::bigint
          RETURNING tat`.pipe(Effect.orDie)
        if (rows.length > 0) return { allowed: true } as const
        const [state] = yield* sql<{ tat: string }>`SELECT tat FROM rate_limits WHERE bucket = ${bucket}`.pipe(
          Effect.orDie
        )
        const tat = Number(state?.tat ?? now)
        const waitMs = tat + interval - periodMs - now
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) } as const
      })

      return RateLimiter.of({ consume })
    })
  )
}
