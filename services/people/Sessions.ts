/**
 * Website sessions. A session has two secrets, neither stored: the cookie token (`vb_session`,
 * 256 random bits; the row's id is its SHA-256) and the access token (`vbs_…`, what the page
 * sends as `Authorization: Bearer` on `/v1/*`; derived from the cookie token by HMAC, so
 * `GET /web/session` can hand it out again, and stored as its SHA-256). The CSRF token is not
 * a secret from the page: it is stored as is and checked against `X-CSRF-Token`.
 *
 * Expiry slides: each use moves `expires_at` to 14 days ahead, never past 30 days after
 * sign-in. The slide is written at most once a minute per session (a hint, like a key's
 * last use). Signing out deletes the row; signing out everywhere deletes the account's rows.
 */
import { Clock, Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { createHash, createHmac, randomBytes } from "node:crypto"
import { Account } from "../../src/contract/domain/Account.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import { accessTokenPrefix, Role, SessionId } from "../../src/contract/domain/People.ts"

export const idleLifetime = Duration.days(14)
export const absoluteLifetime = Duration.days(30)
const touchEveryMs = 60_000

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** The access token that belongs to a cookie token (one-way: the access token never yields the cookie). */
export const accessTokenFor = (cookieToken: string) =>
  accessTokenPrefix + createHmac("sha256", cookieToken).update("verbatim session access token").digest("base64url")

export const SessionRecord = Schema.Struct({
  id: SessionId,
  account_id: Schema.String,
  csrf_token: Schema.String,
  created_at: Schema.Date,
  expires_at: Schema.Date
})
export type SessionRecord = typeof SessionRecord.Type

/** A live session with its account as stored now. */
export interface SignedIn {
  readonly session: SessionRecord
  readonly account: Account
  readonly role: Role
}

export interface IssuedSession {
  /** The cookie's value; goes to the browser once, in `Set-Cookie`. */
  readonly token: string
  readonly accessToken: string
  readonly session: SessionRecord
}

const SignedInRow = Schema.Struct({
  session: SessionRecord,
  account: Account,
  role: Role
})
const decodeSignedIn = Schema.decodeUnknownEffect(SignedInRow)

interface Row {
  readonly id: string
  readonly account_id: string
  readonly csrf_token: string
  readonly created_at: unknown
  readonly expires_at: unknown
  readonly email: string
  readonly plan: string
  readonly plan_expires_at: unknown
  readonly api_access: boolean
  readonly account_created_at: unknown
  readonly role: string
}

export class Sessions extends Context.Service<Sessions, {
  create(accountId: AccountId): Effect.Effect<IssuedSession>
  /** None for unknown, signed-out and expired sessions alike. Slides the expiry. */
  byCookie(token: string): Effect.Effect<Option.Option<SignedIn>>
  /** The same lookup by the `vbs_` access token. */
  byAccessToken(token: string): Effect.Effect<Option.Option<SignedIn>>
  signOut(id: SessionId): Effect.Effect<void>
  /** Ends every session of the account; returns how many ended. */
  signOutEverywhere(accountId: AccountId): Effect.Effect<number>
}>()("verbatim/people/Sessions") {
  static readonly layer = Layer.effect(
    Sessions,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const create = Effect.fn("Sessions.create")(function*(accountId: AccountId) {
        const nowMs = yield* Clock.currentTimeMillis
        const now = new Date(nowMs)
        const token = randomBytes(32).toString("base64url")
        const accessToken = accessTokenFor(token)
        const expires = new Date(nowMs + Duration.toMillis(idleLifetime))
        // Expired rows of this account go now, so the table does not grow with sign-ins.
        yield* sql`DELETE FROM sessions WHERE account_id = ${accountId} AND expires_at <= ${now}`.pipe(Effect.orDie)
        const rows = yield* sql`INSERT INTO sessions (id, account_id, access_hash, csrf_token, created_at, expires_at, last_seen_at)
          VALUES (${sha256(token)}, ${accountId}, ${sha256(accessToken)}, ${randomBytes(24).toString("base64url")},
            ${now}, ${expires}, ${now})
          RETURNING id, account_id, csrf_token, created_at, expires_at`.pipe(Effect.orDie)
        const session = yield* Schema.decodeUnknownEffect(SessionRecord)(rows[0]).pipe(Effect.orDie)
        return { token, accessToken, session } satisfies IssuedSession
      })

      /** One round trip: the live session, its account, and the slide when due. */
      const lookup = (column: "id" | "access_hash", hash: string) =>
        Effect.gen(function*() {
          const nowMs = yield* Clock.currentTimeMillis
          const now = new Date(nowMs)
          const slid = new Date(nowMs + Duration.toMillis(idleLifetime))
          const touchBefore = new Date(nowMs - touchEveryMs)
          const absoluteMs = Duration.toMillis(absoluteLifetime)
          const rows = yield* sql<Row>`
            WITH live AS (
              SELECT * FROM sessions WHERE ${sql.literal(column)} = ${hash} AND expires_at > ${now}
            ), touched AS (
              UPDATE sessions s SET last_seen_at = ${now},
                expires_at = LEAST(${slid}::timestamptz, s.created_at + make_interval(secs => ${absoluteMs / 1000}))
              FROM live WHERE s.id = live.id AND live.last_seen_at < ${touchBefore}
              RETURNING s.id, s.expires_at
            )
            SELECT live.id, live.account_id, live.csrf_token, live.created_at,
              COALESCE((SELECT expires_at FROM touched), live.expires_at) AS expires_at,
              a.email, a.plan, a.plan_expires_at, a.api_access, a.created_at AS account_created_at, a.role
            FROM live JOIN accounts a ON a.id = live.account_id`.pipe(Effect.orDie)
          const row = rows[0]
          if (row === undefined) return Option.none<SignedIn>()
          const signedIn = yield* decodeSignedIn({
            session: {
              id: row.id,
              account_id: row.account_id,
              csrf_token: row.csrf_token,
              created_at: row.created_at,
              expires_at: row.expires_at
            },
            account: {
              id: row.account_id,
              email: row.email,
              plan: row.plan,
              plan_expires_at: row.plan_expires_at,
              api_access: row.api_access,
              created_at: row.account_created_at
            },
            role: row.role
          }).pipe(Effect.orDie)
          return Option.some<SignedIn>(signedIn)
        })

      const byCookie = Effect.fn("Sessions.byCookie")(function*(token: string) {
        return yield* lookup("id", sha256(token))
      })

      const byAccessToken = Effect.fn("Sessions.byAccessToken")(function*(token: string) {
        return yield* lookup("access_hash", sha256(token))
      })

      const signOut = Effect.fn("Sessions.signOut")(function*(id: SessionId) {
        yield* sql`DELETE FROM sessions WHERE id = ${id}`.pipe(Effect.orDie)
      })

      const signOutEverywhere = Effect.fn("Sessions.signOutEverywhere")(function*(accountId: AccountId) {
        const rows = yield* sql`DELETE FROM sessions WHERE account_id = ${accountId} RETURNING id`.pipe(Effect.orDie)
        return rows.length
      })

      return Sessions.of({ create, byCookie, byAccessToken, signOut, signOutEverywhere })
    })
  )
}
