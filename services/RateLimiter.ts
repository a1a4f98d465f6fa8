/**
 * Request-rate limits: a generic cell rate algorithm (GCRA) whose whole state is one `tat`
 * (theoretical arrival time) per bucket. `limit` requests may arrive at once, then one every
 * `60 s / limit`; there is no window edge where twice the limit gets through.
 *
 * Two stores with the same arithmetic:
 * - Postgres (`DATABASE_URL`, possibly several processes): one conditional upsert per request
 *   in `rate_limits`, so every process shares one budget;
 * - in memory, when this process owns the embedded database: no other process serves
 *   requests on it, so the budget lives in a map and costs no database round trip. It starts
 *   empty at every start (a restart forgets who was limited, at most one minute's budget).
 * A process that reaches an embedded database owned by another process keeps to the table.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { EmbeddedPostgres } from "./db/EmbeddedPostgres.ts"

export type RateDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number }

const periodMs = 60_000

const intervalOf = (limitPerMinute: number) => Math.ceil(periodMs / limitPerMinute)

const refusal = (tat: number, interval: number, now: number): RateDecision => ({
  allowed: false,
  retryAfterSeconds: Math.max(1, Math.ceil((tat + interval - periodMs - now) / 1000))
})

/** The in-memory store prunes buckets whose budget is whole again past this many entries. */
const sweepAbove = 10_000

/** GCRA over a map; pure bookkeeping, exported for its test. */
export const makeMemoryGcra = () => {
  const tats = new Map<string, number>()
  let sweptAt = 0
  const sweep = (now: number) => {
    // A bucket whose tat has passed is the same as no bucket; dropping it bounds the map
    // under many distinct guests. At most once a second, so a flood cannot make it quadratic.
    if (tats.size <= sweepAbove || now - sweptAt < 1_000) return
    sweptAt = now
    for (const [bucket, tat] of tats) if (tat <= now) tats.delete(bucket)
  }
  return {
    consume: (bucket: string, limitPerMinute: number, now: number): RateDecision => {
      const interval = intervalOf(limitPerMinute)
      const tat = tats.get(bucket)
      const next = Math.max(tat ?? now, now) + interval
      if (next - now > periodMs) return refusal(tat ?? now, interval, now)
      tats.set(bucket, next)
      sweep(now)
      return { allowed: true }
    },
    size: () => tats.size
  }
}

export class RateLimiter extends Context.Service<RateLimiter, {
  /** Counts one request against `bucket` allowing `limitPerMinute`. */
  consume(bucket: string, limitPerMinute: number): Effect.Effect<RateDecision>
}>()("verbatim/limits/RateLimiter") {
  /** Shared by every process on one database: the `rate_limits` table. */
  static readonly postgres = Layer.effect(
    RateLimiter,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const consume = Effect.fn("RateLimiter.consume")(function*(bucket: string, limitPerMinute: number) {
        const now = yield* Clock.currentTimeMillis
        const interval = intervalOf(limitPerMinute)
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
        return refusal(Number(state?.tat ?? now), interval, now)
      })

      return RateLimiter.of({ consume })
    })
  )

  /** This process alone serves requests on its database. */
  static readonly memory = Layer.sync(RateLimiter, () => {
    const gcra = makeMemoryGcra()
    return RateLimiter.of({
      consume: (bucket, limitPerMinute) =>
        Effect.map(Clock.currentTimeMillis, (now) => gcra.consume(bucket, limitPerMinute, now))
    })
  })

  /** In memory when this process owns the embedded database, else the table. */
  static readonly layer = Layer.unwrap(
    Effect.map(
      Effect.serviceOption(EmbeddedPostgres),
      (embedded) => Option.isSome(embedded) && embedded.value.owner ? RateLimiter.memory : RateLimiter.postgres
    )
  )
}
