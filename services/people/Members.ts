/**
 * The owner's view of the installation's accounts (the Admin page): every account with its
 * role, plan, API access, whether it can sign in, and its balance. The changes themselves go
 * through the services the admin CLI uses (Accounts, Billing, Checkouts).
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Account } from "../../src/contract/domain/Account.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import { Role } from "../../src/contract/domain/People.ts"

export const Member = Schema.Struct({
  account: Account,
  role: Role,
  signed_up: Schema.Boolean,
  balance_minutes: Schema.Number
})
export type Member = typeof Member.Type

const decodeMember = Schema.decodeUnknownEffect(Member)

export class Members extends Context.Service<Members, {
  list(): Effect.Effect<ReadonlyArray<Member>>
  get(id: AccountId): Effect.Effect<Option.Option<Member>>
}>()("verbatim/people/Members") {
  static readonly layer = Layer.effect(
    Members,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const query = (id: AccountId | null) =>
        sql<Record<string, unknown>>`SELECT a.id, a.email, a.plan, a.plan_expires_at, a.api_access, a.created_at, a.role,
            a.password_hash IS NOT NULL AS signed_up,
            COALESCE((SELECT sum(minutes) FROM ledger l WHERE l.account_id = a.id), 0)::float8 AS balance_minutes
          FROM accounts a ${id === null ? sql`` : sql`WHERE a.id = ${id}`}
          ORDER BY a.role = 'owner' DESC, a.created_at, a.id`.pipe(
          Effect.orDie,
          Effect.flatMap((rows) =>
            Effect.forEach(rows, (row) =>
              decodeMember({
                account: {
                  id: row["id"],
                  email: row["email"],
                  plan: row["plan"],
                  plan_expires_at: row["plan_expires_at"],
                  api_access: row["api_access"],
                  created_at: row["created_at"]
                },
                role: row["role"],
                signed_up: row["signed_up"],
                balance_minutes: Number(row["balance_minutes"])
              }).pipe(Effect.orDie))
          )
        )

      const list = Effect.fn("Members.list")(function*() {
        return yield* query(null)
      })
      const get = Effect.fn("Members.get")(function*(id: AccountId) {
        return Option.fromNullishOr((yield* query(id))[0])
      })
      return Members.of({ list, get })
    })
  )
}
