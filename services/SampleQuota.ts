/**
 * Keyless samples: without a key a client (its network address) may start a few sample
 * transcriptions per UTC day. Each sample job is owned through a claim token that the
 * submit answer carries once; only its hash is stored with the job, and reads of the job
 * must present it as `X-Claim-Token`.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

const dayMs = 86_400_000

export type QuotaDecision =
  | { readonly allowed: true; readonly used: number }
  | { readonly allowed: false; readonly retryAfterSeconds: number }

export interface ClaimToken {
  readonly token: string
  readonly hash: string
}

export const hashClaimToken = (token: string) => createHash("sha256").update(token).digest("hex")

export class SampleQuota extends Context.Service<SampleQuota, {
  /** Takes one sample from `clientId`'s allowance for today, or says when the next opens. */
  consume(clientId: string, perDay: number): Effect.Effect<QuotaDecision>
  newClaimToken(): ClaimToken
  /** Constant-time check of a presented token against the stored hash. */
  verify(token: string, storedHash: string): boolean
}>()("verbatim/limits/SampleQuota") {
  static readonly layer = Layer.effect(
    SampleQuota,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const consume = Effect.fn("SampleQuota.consume")(function*(clientId: string, perDay: number) {
        const now = yield* Clock.currentTimeMillis
        const day = Math.floor(now / dayMs) * dayMs
        const rows = yield* sql<{ count: number }>`
          INSERT INTO usage_counters (bucket, window_start, count) VALUES (${`sample:${clientId}`}, ${day}::bigint, 1)
          ON CONFLICT (bucket, window_start) DO UPDATE SET count = usage_counters.count + 1
            WHERE usage_counters.count < ${perDay}
          RETURNING count`.pipe(Effect.orDie)
        const row = rows[0]
        if (row !== undefined) return { allowed: true, used: row.count } as const
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((day + dayMs - now) / 1000)) } as const
      })

      const newClaimToken = (): ClaimToken => {
        const token = `claim_${randomBytes(24).toString("base64url")}`
        return { token, hash: hashClaimToken(token) }
      }

      const verify = (token: string, storedHash: string) => {
        const presented = Buffer.from(hashClaimToken(token), "hex")
        const stored = Buffer.from(storedHash, "hex")
        return presented.length === stored.length && timingSafeEqual(presented, stored)
      }

      return SampleQuota.of({ consume, newClaimToken, verify })
    })
  )
}
