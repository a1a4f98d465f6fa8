/**
 * HMAC-SHA256 signatures for links this service hands out (upload URLs, playback URLs).
 * The secret comes from `VERBATIM_SIGNING_SECRET`, or is generated once and kept in the
 * database, so every process on one database signs and verifies alike, across restarts.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { AppConfig } from "../AppConfig.ts"

export class Signer extends Context.Service<Signer, {
  sign(payload: string): string
  verify(payload: string, signature: string): boolean
}>()("verbatim/security/Signer") {
  static readonly make = (secret: string) => {
    const sign = (payload: string) => createHmac("sha256", secret).update(payload).digest("base64url")
    return Signer.of({
      sign,
      verify: (payload, signature) => {
        const expected = Buffer.from(sign(payload))
        const given = Buffer.from(signature)
        return expected.length === given.length && timingSafeEqual(expected, given)
      }
    })
  }

  static readonly layer = Layer.effect(
    Signer,
    Effect.gen(function*() {
      const config = yield* AppConfig
      if (Option.isSome(config.signingSecret)) return Signer.make(Redacted.value(config.signingSecret.value))
      const sql = yield* SqlClient.SqlClient
      const candidate = randomBytes(32).toString("base64url")
      // First writer wins; everyone then reads the same secret.
      yield* sql`INSERT INTO instance_settings (key, value) VALUES ('signing_secret', ${candidate})
        ON CONFLICT (key) DO NOTHING`
      const [row] = yield* sql<{ value: string }>`SELECT value FROM instance_settings WHERE key = 'signing_secret'`
      return Signer.make(row!.value)
    }).pipe(Effect.orDie)
  )
}
