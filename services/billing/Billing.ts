/**
 * Minutes of audio on an append-only ledger. A balance is always the sum of an account's
 * entries (grants, purchases, job and clip charges); nothing is ever updated in place.
 *
 * A finished job with speech is charged exactly once — the ledger's unique (kind, ref)
 * with ref = job id enforces it — inside the transaction that marks it done, while the
 * account row is locked, so concurrent completions on several processes can neither
 * overdraw nor double-charge. When the balance cannot cover a job, the job ends done but
 * `locked`; when credit lands, locked jobs are charged and unlocked oldest first. Failed
 * and no-speech jobs are never charged; deleting a job never refunds. Plans with unlimited
 * minutes (Workspace while its period runs, Enterprise) charge nothing, and neither does the
 * installation's owner (the website's first sign-up, issue 23): the person running the
 * service is not held back by its own balance — no NO_CREDITS, no lock, no clip refusal.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { billableMinutes } from "../../src/contract/domain/Catalog.ts"
import type { AccountId, JobId } from "../../src/contract/domain/Ids.ts"
import { plans, type PlanId } from "../../src/contract/domain/Plan.ts"

export class InvalidAmount extends Schema.TaggedError<InvalidAmount>()("InvalidAmount", {
  minutes: Schema.Number
}) {
  override get message() {
    return `A grant must be a positive number of minutes (got ${this.minutes}).`
  }
}

export type LedgerKind = "grant" | "purchase" | "job_charge" | "clip_charge" | "plan_period"

interface AccountBilling {
  readonly plan: PlanId
  readonly plan_expires_at: Date | null
}

/** Uses minutes without paying for them: an unlimited plan in force, or the installation's owner. */
export const unmetered = (account: AccountBilling & { readonly role?: string | undefined }, now: number): boolean =>
  account.role === "owner" || plans[effectivePlan(account, now)].unlimitedMinutes

/** The plan in force: a Workspace period that ran out falls back to standard. */
export const effectivePlan = (account: AccountBilling, now: number): PlanId =>
  account.plan_expires_at !== null && account.plan_expires_at.getTime() <= now ? "standard" : account.plan

export interface Settlement {
  readonly locked: boolean
  readonly chargedMinutes: number | null
}

export class Billing extends Context.Service<Billing, {
  balanceMinutes(accountId: AccountId): Effect.Effect<number>
  /** Whether the account pays per minute now (false on unlimited plans and for the owner). */
  metered(accountId: AccountId): Effect.Effect<boolean>
  /**
   * Charges a job that just ended done, or locks it when the balance cannot cover it.
   * Must run inside the transaction that ends the job.
   */
  settle(job: {
    readonly id: JobId
    readonly account_id: AccountId | null
    readonly speech_detected: boolean | null
    readonly audio_duration_seconds: number | null
  }): Effect.Effect<Settlement>
  /** Appends a credit (idempotent per kind and ref), then unlocks what it covers. */
  credit(accountId: AccountId, entry: { readonly kind: LedgerKind; readonly minutes: number; readonly ref: string; readonly note?: string | undefined }): Effect.Effect<{ readonly credited: boolean; readonly unlocked: number }>
  /** Operator grant (admin CLI `credits grant`). */
  grant(accountId: AccountId, minutes: number, note?: string): Effect.Effect<{ readonly balanceMinutes: number; readonly unlocked: number }, InvalidAmount>
  /** Charges and unlocks locked jobs, oldest first, while the balance covers them. */
  unlockCovered(accountId: AccountId): Effect.Effect<number>
}>()("verbatim/billing/Billing") {
  static readonly layer = Layer.effect(
    Billing,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

      const balanceMinutes = Effect.fn("Billing.balanceMinutes")(function*(accountId: AccountId) {
        const rows = yield* sql<{ minutes: string | null }>`SELECT sum(minutes)::text AS minutes FROM ledger
          WHERE account_id = ${accountId}`.pipe(Effect.orDie)
        return Number(rows[0]?.minutes ?? 0)
      })

      const lockAccount = (accountId: AccountId) =>
        sql<AccountBilling & { role: string }>`SELECT plan, plan_expires_at, role FROM accounts WHERE id = ${accountId} FOR UPDATE`.pipe(
          Effect.map((rows) => rows[0]),
          Effect.orDie
        )

      const metered = Effect.fn("Billing.metered")(function*(accountId: AccountId) {
        const [account] = yield* sql<AccountBilling & { role: string }>`SELECT plan, plan_expires_at, role
          FROM accounts WHERE id = ${accountId}`.pipe(Effect.orDie)
        if (account === undefined) return true
        return !unmetered(account, yield* Clock.currentTimeMillis)
      })

      const charge = (accountId: AccountId, jobId: JobId, minutes: number, at: Date) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO ledger (account_id, kind, minutes, ref, created_at)
            VALUES (${accountId}, 'job_charge', ${-minutes}, ${jobId}, ${at})
            ON CONFLICT (kind, ref) DO NOTHING`
          yield* sql`UPDATE jobs SET locked = false, charged_minutes = ${minutes} WHERE id = ${jobId}`
        }).pipe(Effect.orDie)

      const settle = Effect.fn("Billing.settle")(function*(job: {
        readonly id: JobId
        readonly account_id: AccountId | null
        readonly speech_detected: boolean | null
        readonly audio_duration_seconds: number | null
      }) {
        // Keyless samples are free previews; no speech is never charged.
        if (job.account_id === null || job.speech_detected !== true) return { locked: false, chargedMinutes: null }
        const at = yield* nowDate
        const account = yield* lockAccount(job.account_id)
        if (account !== undefined && unmetered(account, at.getTime())) {
          yield* sql`UPDATE jobs SET charged_minutes = 0 WHERE id = ${job.id}`.pipe(Effect.orDie)
          return { locked: false, chargedMinutes: 0 }
        }
        const minutes = billableMinutes(job.audio_duration_seconds ?? 0)
        const balance = yield* balanceMinutes(job.account_id)
        if (balance + 1e-9 < minutes) {
          yield* sql`UPDATE jobs SET locked = true WHERE id = ${job.id}`.pipe(Effect.orDie)
          return { locked: true, chargedMinutes: null }
        }
        yield* charge(job.account_id, job.id, minutes, at)
        return { locked: false, chargedMinutes: minutes }
      })

      const unlockCovered = Effect.fn("Billing.unlockCovered")(function*(accountId: AccountId) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const at = yield* nowDate
          const account = yield* lockAccount(accountId)
          const unlimited = account !== undefined && unmetered(account, at.getTime())
          const locked = yield* sql<{ id: JobId; audio_duration_seconds: number | null }>`SELECT id, audio_duration_seconds
            FROM jobs WHERE account_id = ${accountId} AND locked AND status = 'done' AND deleted_at IS NULL
            ORDER BY completed_at, id`
          let balance = yield* balanceMinutes(accountId)
          let unlocked = 0
          for (const job of locked) {
            const minutes = unlimited ? 0 : billableMinutes(job.audio_duration_seconds ?? 0)
            if (balance + 1e-9 < minutes) break
            if (minutes > 0) yield* charge(accountId, job.id, minutes, at)
            else yield* sql`UPDATE jobs SET locked = false, charged_minutes = 0 WHERE id = ${job.id}`
            balance -= minutes
            unlocked++
          }
          return unlocked
        })).pipe(Effect.orDie)
      })

      const credit = Effect.fn("Billing.credit")(function*(
        accountId: AccountId,
        entry: { readonly kind: LedgerKind; readonly minutes: number; readonly ref: string; readonly note?: string | undefined }
      ) {
        const at = yield* nowDate
        const rows = yield* sql`INSERT INTO ledger (account_id, kind, minutes, ref, note, created_at)
          VALUES (${accountId}, ${entry.kind}, ${entry.minutes}, ${entry.ref}, ${entry.note ?? null}, ${at})
          ON CONFLICT (kind, ref) DO NOTHING RETURNING id`.pipe(Effect.orDie)
        const unlocked = yield* unlockCovered(accountId)
        return { credited: rows.length > 0, unlocked }
      })

      const grant = Effect.fn("Billing.grant")(function*(accountId: AccountId, minutes: number, note?: string) {
        if (!Number.isFinite(minutes) || minutes <= 0) return yield* new InvalidAmount({ minutes })
        const { unlocked } = yield* credit(accountId, { kind: "grant", minutes, ref: crypto.randomUUID(), note })
        return { balanceMinutes: yield* balanceMinutes(accountId), unlocked }
      })

      return Billing.of({ balanceMinutes, metered, settle, credit, grant, unlockCovered })
    })
  )
}
