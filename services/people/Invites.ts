/**
 * Invites: once an owner exists, a sign-up needs one. The owner names an email; the invite
 * link carries a token (192 random bits, stored only as its SHA-256), valid 7 days, used once,
 * and only for that email. An account the admin CLI created (no password yet) is claimed by
 * signing up with an invite to its email.
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createHash, randomBytes } from "node:crypto"
import type { ValidationFailed } from "../../src/contract/api/Errors.ts"
import { AccountExists, SignUpRefused } from "../../src/contract/api/SessionErrors.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import { checkEmail, normalizeEmail } from "./Emails.ts"

export const inviteLifetime = Duration.days(7)

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

export interface IssuedInvite {
  readonly token: string
  readonly email: string
  readonly expiresAt: Date
}

export class Invites extends Context.Service<Invites, {
  create(invitedBy: AccountId, email: string): Effect.Effect<IssuedInvite, AccountExists | ValidationFailed>
  /**
   * Marks the invite used for `email`; fails when it is unknown, used, expired or for another
   * email. Must run inside the sign-up's transaction (a failed sign-up leaves it unused).
   */
  use(token: string, email: string): Effect.Effect<void, SignUpRefused>
  /** Whether `use` would accept it now (read only; for refusing early). */
  usable(token: string, email: string): Effect.Effect<boolean>
  /** The refusal of an invite that is unknown, used, expired or for another email. */
  invalid(): SignUpRefused
}>()("verbatim/people/Invites") {
  static readonly layer = Layer.effect(
    Invites,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const create = Effect.fn("Invites.create")(function*(invitedBy: AccountId, rawEmail: string) {
        const email = yield* checkEmail(rawEmail)
        const [taken] = yield* sql`SELECT 1 FROM accounts WHERE email = ${email} AND password_hash IS NOT NULL`.pipe(Effect.orDie)
        if (taken !== undefined) {
          return yield* new AccountExists({ error: `${email} already has an account that can sign in.` })
        }
        const nowMs = yield* Clock.currentTimeMillis
        const token = `inv_${randomBytes(24).toString("base64url")}`
        const expiresAt = new Date(nowMs + Duration.toMillis(inviteLifetime))
        yield* sql`INSERT INTO invites (id, email, token_hash, invited_by, created_at, expires_at)
          VALUES (${crypto.randomUUID()}, ${email}, ${sha256(token)}, ${invitedBy}, ${new Date(nowMs)}, ${expiresAt})`
          .pipe(Effect.orDie)
        return { token, email, expiresAt } satisfies IssuedInvite
      })

      const invalid = () =>
        new SignUpRefused({
          error: "This invite is not valid: it is unknown, already used, expired, or for another email.",
          code: "INVITE_INVALID"
        })

      const usable = Effect.fn("Invites.usable")(function*(token: string, email: string) {
        const now = new Date(yield* Clock.currentTimeMillis)
        const rows = yield* sql`SELECT 1 FROM invites WHERE token_hash = ${sha256(token)} AND email = ${normalizeEmail(email)}
          AND used_at IS NULL AND expires_at > ${now}`.pipe(Effect.orDie)
        return rows.length > 0
      })

      const use = Effect.fn("Invites.use")(function*(token: string, email: string) {
        const now = new Date(yield* Clock.currentTimeMillis)
        const rows = yield* sql`UPDATE invites SET used_at = ${now}
          WHERE token_hash = ${sha256(token)} AND email = ${normalizeEmail(email)} AND used_at IS NULL AND expires_at > ${now}
          RETURNING id`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* invalid()
      })

      return Invites.of({ create, use, usable, invalid })
    })
  )
}
