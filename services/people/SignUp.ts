/**
 * Sign-up. On an installation without an owner, the first sign-up becomes the owner (with API
 * access: the operator's own keys need no purchase); afterwards a sign-up needs the owner's
 * invite to that email. Both run in one transaction under a transaction-scoped advisory lock,
 * so two concurrent first sign-ups make one owner and one refusal, on any number of processes
 * (the `accounts_one_owner` unique index of migration 0012 backs the rule in the schema too).
 *
 * An account without a password (created with the admin CLI) is claimed, not duplicated:
 * the first sign-up with its email makes it the owner's account; later, an invite to its email
 * lets its person set a password. An email that can already sign in is refused (409).
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { ValidationFailed } from "../../src/contract/api/Errors.ts"
import { AccountExists, SignUpRefused } from "../../src/contract/api/SessionErrors.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import type { Role } from "../../src/contract/domain/People.ts"
import { checkEmail } from "./Emails.ts"
import { Invites } from "./Invites.ts"
import { Passwords } from "./Passwords.ts"
import { type IssuedSession, Sessions } from "./Sessions.ts"

/** Any fixed number: the key of the advisory lock that serialises sign-ups. */
const signUpLock = 730_023

export interface SignUpInput {
  readonly email: string
  readonly password: string
  readonly invite?: string | undefined
}

export interface SignedUp {
  readonly accountId: AccountId
  readonly role: Role
  readonly issued: IssuedSession
}

export class SignUp extends Context.Service<SignUp, {
  signUp(input: SignUpInput): Effect.Effect<SignedUp, SignUpRefused | AccountExists | ValidationFailed>
}>()("verbatim/people/SignUp") {
  static readonly layer = Layer.effect(
    SignUp,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const passwords = yield* Passwords
      const invites = yield* Invites
      const sessions = yield* Sessions

      const inviteRequired = () =>
        new SignUpRefused({
          error: "This installation has an owner; signing up needs an invite from them.",
          code: "INVITE_REQUIRED"
        })

      const signUp = Effect.fn("SignUp.signUp")(function*(input: SignUpInput) {
        const email = yield* checkEmail(input.email)
        // Refusals that need no password come before the hash (32 MiB and ~0.1 s of CPU), so
        // nobody can make the server hash for a sign-up that cannot succeed. The transaction
        // below decides again under the lock.
        const [ownerNow] = yield* sql`SELECT 1 FROM accounts WHERE role = 'owner'`.pipe(Effect.orDie)
        if (ownerNow !== undefined) {
          if (input.invite === undefined || input.invite === "") return yield* inviteRequired()
          if (!(yield* invites.usable(input.invite, email))) return yield* invites.invalid()
        }
        // The slow hash runs before the lock, so sign-ups wait on each other only for a few queries.
        const hash = yield* passwords.hash(input.password)
        const created = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${signUpLock})`
          const [owner] = yield* sql`SELECT 1 FROM accounts WHERE role = 'owner'`
          const [existing] = yield* sql<{ id: AccountId; password_hash: string | null }>`SELECT id, password_hash
            FROM accounts WHERE email = ${email} FOR UPDATE`
          const role: Role = owner === undefined ? "owner" : "member"
          if (role === "member") {
            if (input.invite === undefined || input.invite === "") return yield* inviteRequired()
            yield* invites.use(input.invite, email)
          }
          if (existing !== undefined && existing.password_hash !== null) {
            return yield* new AccountExists({ error: `${email} already has an account: sign in instead.` })
          }
          const ownerAccess = role === "owner"
          if (existing !== undefined) {
            yield* sql`UPDATE accounts SET password_hash = ${hash}, role = ${role},
              api_access = api_access OR ${ownerAccess} WHERE id = ${existing.id}`
            return { accountId: existing.id, role }
          }
          const id = crypto.randomUUID() as AccountId
          yield* sql`INSERT INTO accounts (id, email, created_at, password_hash, role, api_access)
            VALUES (${id}, ${email}, ${new Date(yield* Clock.currentTimeMillis)}, ${hash}, ${role}, ${ownerAccess})`
          return { accountId: id, role }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        const issued = yield* sessions.create(created.accountId)
        return { ...created, issued } satisfies SignedUp
      })

      return SignUp.of({ signUp })
    })
  )
}
