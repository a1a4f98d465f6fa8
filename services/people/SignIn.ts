/**
 * Sign-in with email and password. A wrong password and an unknown email get the same answer
 * (401 BAD_CREDENTIALS, one sentence) after the same work (one scrypt either way, see
 * Passwords). Failed attempts are counted per client address and per email in 15-minute
 * windows (`usage_counters`); at 5 failures in the current window either count refuses further
 * attempts — right or wrong — with 429 RATE_LIMITED until the window ends, before any
 * password is checked (so guessing also cannot burn the server's CPU). Each attempt first
 * takes one unit from both counts atomically (an upsert that stops at 5), so parallel guesses
 * cannot all pass the check before any failure is written; a success gives its units back.
 * A success does not clear earlier failures: five wrong guesses then a right one is refused
 * until the window ends.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { RateLimited } from "../../src/contract/api/Errors.ts"
import { BadCredentials } from "../../src/contract/api/SessionErrors.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import type { Role } from "../../src/contract/domain/People.ts"
import { normalizeEmail } from "./Emails.ts"
import { Passwords } from "./Passwords.ts"
import { type IssuedSession, Sessions } from "./Sessions.ts"

export const failuresAllowed = 5
export const throttleWindowMs = 15 * 60_000

export interface SignedInFresh {
  readonly accountId: AccountId
  readonly role: Role
  readonly issued: IssuedSession
}

export class SignIn extends Context.Service<SignIn, {
  signIn(input: { readonly email: string; readonly password: string; readonly clientAddress: string }): Effect.Effect<
    SignedInFresh,
    BadCredentials | RateLimited
  >
}>()("verbatim/people/SignIn") {
  static readonly layer = Layer.effect(
    SignIn,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const passwords = yield* Passwords
      const sessions = yield* Sessions

      const buckets = (email: string, address: string) => [`signin-fail:ip:${address}`, `signin-fail:email:${email}`]

      const signIn = Effect.fn("SignIn.signIn")(function*(input: {
        readonly email: string
        readonly password: string
        readonly clientAddress: string
      }) {
        const email = normalizeEmail(input.email)
        const now = yield* Clock.currentTimeMillis
        const window = Math.floor(now / throttleWindowMs) * throttleWindowMs
        const reserve = (bucket: string) =>
          sql`INSERT INTO usage_counters (bucket, window_start, count) VALUES (${bucket}, ${window}::bigint, 1)
            ON CONFLICT (bucket, window_start) DO UPDATE SET count = usage_counters.count + 1
              WHERE usage_counters.count < ${failuresAllowed}
            RETURNING count`.pipe(Effect.orDie, Effect.map((rows) => rows.length > 0))
        const release = (bucket: string) =>
          sql`UPDATE usage_counters SET count = count - 1
            WHERE bucket = ${bucket} AND window_start = ${window}::bigint AND count > 0`.pipe(Effect.orDie)
        const [byAddress, byEmail] = buckets(email, input.clientAddress) as [string, string]
        const addressOk = yield* reserve(byAddress)
        const emailOk = addressOk && (yield* reserve(byEmail))
        if (!emailOk) {
          if (addressOk) yield* release(byAddress)
          const retryAfter = Math.max(1, Math.ceil((window + throttleWindowMs - now) / 1000))
          return yield* new RateLimited({
            error: `Too many failed sign-ins from this address or for this email; try again in ${Math.ceil(retryAfter / 60)} minutes.`,
            code: "RATE_LIMITED",
            retry_after: retryAfter
          })
        }
        const [account] = yield* sql<{ id: AccountId; password_hash: string | null; role: Role }>`SELECT id, password_hash, role
          FROM accounts WHERE email = ${email}`.pipe(Effect.orDie)
        const ok = yield* passwords.verify(input.password, account?.password_hash ?? null)
        // A failure keeps the units it took: they are the failure counts.
        if (!ok || account === undefined) return yield* new BadCredentials({ error: "The email or the password is not right." })
        yield* release(byAddress)
        yield* release(byEmail)
        const issued = yield* sessions.create(account.id)
        return { accountId: account.id, role: account.role, issued } satisfies SignedInFresh
      })

      return SignIn.of({ signIn })
    })
  )
}

