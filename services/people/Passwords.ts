/**
 * Password hashing: scrypt from node:crypto with N = 2^15, r = 8, p = 1 (32 MiB per hash:
 * memory-hard, so guessing on GPUs is expensive) and a 16-byte random salt. Stored as
 * `scrypt$<N>$<r>$<p>$<salt>$<hash>` (base64url), so the parameters can be raised later
 * without breaking stored hashes. Verification compares in constant time.
 */
import { Context, Effect, Layer } from "effect"
import { randomBytes, scrypt, type ScryptOptions, timingSafeEqual } from "node:crypto"

const params = { N: 2 ** 15, r: 8, p: 1 }
const keyLength = 32
/** scrypt needs 128·N·r bytes; node's default cap (32 MiB) is exactly that, so leave room. */
const maxmem = 64 * 1024 * 1024

const derive = (password: string, salt: Buffer, options: ScryptOptions) =>
  Effect.callback<Buffer>((resume) => {
    scrypt(password.normalize("NFC"), salt, keyLength, { ...options, maxmem }, (error, key) => {
      // Only out-of-range parameters make scrypt fail; ours are constants.
      if (error !== null) resume(Effect.die(error))
      else resume(Effect.succeed(key))
    })
  })

const b64 = (bytes: Buffer) => bytes.toString("base64url")

/** A stored hash of a password nobody has: used when the email is unknown, so both cases cost one scrypt. */
const decoy = `scrypt$${params.N}$${params.r}$${params.p}$${b64(randomBytes(16))}$${b64(randomBytes(keyLength))}`

export class Passwords extends Context.Service<Passwords, {
  hash(password: string): Effect.Effect<string>
  /** False for a wrong password and for a stored value that is not a hash this service wrote. */
  verify(password: string, stored: string | null): Effect.Effect<boolean>
}>()("verbatim/people/Passwords") {
  static readonly layer = Layer.succeed(
    Passwords,
    Passwords.of({
      hash: Effect.fn("Passwords.hash")(function*(password: string) {
        const salt = randomBytes(16)
        const key = yield* derive(password, salt, params)
        return `scrypt$${params.N}$${params.r}$${params.p}$${b64(salt)}$${b64(key)}`
      }),
      verify: Effect.fn("Passwords.verify")(function*(password: string, stored: string | null) {
        const parts = (stored ?? decoy).split("$")
        const [scheme, n, r, p, salt, hash] = parts
        if (parts.length !== 6 || scheme !== "scrypt" || salt === undefined || hash === undefined) return false
        const expected = Buffer.from(hash, "base64url")
        const options = { N: Number(n), r: Number(r), p: Number(p) }
        if (!Number.isInteger(options.N) || !Number.isInteger(options.r) || !Number.isInteger(options.p)) return false
        const key = yield* derive(password, Buffer.from(salt, "base64url"), options)
        return stored !== null && key.length === expected.length && timingSafeEqual(key, expected)
      })
    })
  )
}
