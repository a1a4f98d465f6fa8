/**
 * HMAC-SHA256 signatures for links this service hands out (upload URLs, playback URLs).
 *
 * The secret is `VERBATIM_SIGNING_SECRET` when set, used as is. Otherwise it is derived
 * (HKDF-SHA256) from `VERBATIM_SECRET_KEY`, or, when that is unset too, from a random key
 * written once to `<dataDir>/secret.key` (mode 0600). Neither the secret nor the key is
 * kept in the database: a copy of the database alone cannot forge links. Every process
 * with the same key (or the same data dir) signs and verifies alike, across restarts.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { SecurityConfig } from "../config/SecurityConfig.ts"
import { StorageConfig } from "../config/StorageConfig.ts"

/** Derivation context: a new purpose gets a new label, never the same secret. */
const signingInfo = "verbatim/signed-links/v1"

const derive = (key: string) => Buffer.from(hkdfSync("sha256", key, "", signingInfo, 32)).toString("base64url")

/**
 * The data dir's key, created on first use. Written under a temporary name and linked into
 * place, so processes starting together all read the one key that won.
 */
const dataDirKey = (dataDir: string): string => {
  const file = path.join(dataDir, "secret.key")
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true })
    const temporary = `${file}.${randomBytes(4).toString("hex")}.tmp`
    fs.writeFileSync(temporary, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 })
    try {
      fs.linkSync(temporary, file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    } finally {
      fs.rmSync(temporary, { force: true })
    }
  }
  return fs.readFileSync(file, "utf8").trim()
}

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
      const config = { ...(yield* SecurityConfig), ...(yield* StorageConfig) }
      const sql = yield* SqlClient.SqlClient
      // Earlier versions kept the secret itself here in plain text: never read, now removed.
      yield* sql`DELETE FROM instance_settings WHERE key = 'signing_secret'`
      if (Option.isSome(config.signingSecret)) return Signer.make(Redacted.value(config.signingSecret.value))
      const key = Option.isSome(config.secretKey)
        ? Redacted.value(config.secretKey.value)
        : yield* Effect.sync(() => dataDirKey(config.dataDir))
      return Signer.make(derive(key))
    }).pipe(Effect.orDie)
  )
}
