/** What an account used: minutes of transcribed speech by period, queue depth, job time. */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { AccountId } from "../../src/contract/domain/Ids.ts"

const dayMs = 86_400_000

export interface UsageFigures {
  readonly minutesToday: number
  readonly minutesMonthToDate: number
  readonly hoursLifetime: number
  readonly queueDepth: number
  readonly averageJobSeconds: number | null
}

/** One ledger row as the account sees it (minutes signed: credit positive, charge negative). */
export interface LedgerLine {
  readonly kind: string
  readonly minutes: number
  readonly ref: string | null
  readonly note: string | null
  readonly createdAt: Date
}

export class UsageReport extends Context.Service<UsageReport, {
  figures(accountId: AccountId): Effect.Effect<UsageFigures>
  /** The newest `limit` ledger entries of the account, newest first. */
  recentEntries(accountId: AccountId, limit: number): Effect.Effect<ReadonlyArray<LedgerLine>>
}>()("verbatim/billing/UsageReport") {
  static readonly layer = Layer.effect(
    UsageReport,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const figures = Effect.fn("UsageReport.figures")(function*(accountId: AccountId) {
        const now = yield* Clock.currentTimeMillis
        const today = new Date(Math.floor(now / dayMs) * dayMs)
        const date = new Date(now)
        const month = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1))
        const monthAgo = new Date(now - 30 * dayMs)
        // Usage counts transcribed audio (done with speech), whatever the plan charged for it, in
        // billed seconds: each job rounded up to the whole second, as billing counts it.
        const [row] = yield* sql<{ today: number | null; month: number | null; lifetime: number | null; average: number | null; queued: number }>`
          SELECT
            (SELECT sum(ceil(audio_duration_seconds)) FROM jobs WHERE account_id = ${accountId} AND status = 'done'
              AND speech_detected AND completed_at >= ${today}) AS today,
            (SELECT sum(ceil(audio_duration_seconds)) FROM jobs WHERE account_id = ${accountId} AND status = 'done'
              AND speech_detected AND completed_at >= ${month}) AS month,
            (SELECT sum(ceil(audio_duration_seconds)) FROM jobs WHERE account_id = ${accountId} AND status = 'done'
              AND speech_detected) AS lifetime,
            (SELECT avg(EXTRACT(EPOCH FROM (completed_at - created_at)))::float8 FROM jobs
              WHERE account_id = ${accountId} AND status = 'done' AND completed_at >= ${monthAgo}) AS average,
            (SELECT count(*)::int FROM jobs WHERE account_id = ${accountId} AND status IN ('queued', 'processing')
              AND deleted_at IS NULL) AS queued`.pipe(Effect.orDie)
        const round = (x: number, places: number) => Math.round(x * 10 ** places) / 10 ** places
        return {
          minutesToday: round((row?.today ?? 0) / 60, 2),
          minutesMonthToDate: round((row?.month ?? 0) / 60, 2),
          hoursLifetime: round((row?.lifetime ?? 0) / 3600, 4),
          queueDepth: row?.queued ?? 0,
          averageJobSeconds: row?.average === null || row?.average === undefined ? null : round(row.average, 1)
        }
      })
      const recentEntries = Effect.fn("UsageReport.recentEntries")(function*(accountId: AccountId, limit: number) {
        const rows = yield* sql<{ kind: string; minutes: string | number; ref: string | null; note: string | null; created_at: Date }>`
          SELECT kind, minutes, ref, note, created_at FROM ledger WHERE account_id = ${accountId}
          ORDER BY created_at DESC, id DESC LIMIT ${limit}`.pipe(Effect.orDie)
        // numeric(14, 4) arrives as text from the driver.
        return rows.map((row): LedgerLine => ({
          kind: row.kind,
          minutes: Number(row.minutes),
          ref: row.ref,
          note: row.note,
          createdAt: new Date(row.created_at)
        }))
      })
      return UsageReport.of({ figures, recentEntries })
    })
  )
}
