/**
 * Usage figures count what billing counts: each job's duration rounded up to the whole
 * second (spec, Billing), summed, not the raw durations.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../services/Accounts.ts"
import { UsageReport } from "../../services/billing/UsageReport.ts"
import { domainTestLayer } from "../support/domain.ts"

layer(domainTestLayer("usage-report"), { timeout: 60_000 })("UsageReport", (it) => {
  it.effect("sums billed seconds (each job rounded up to the second) for today, the month and the lifetime", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const account = yield* (yield* Accounts).create("usage-report@example.com")
      const now = new Date()
      const job = (seconds: number, speech: boolean, status = "done") =>
        sql`INSERT INTO jobs ${
          sql.insert({
            id: crypto.randomUUID(),
            account_id: account.id,
            status,
            source: "upload",
            input_kind: "upload",
            audio_duration_seconds: seconds,
            speech_detected: speech,
            created_at: new Date(now.getTime() - 5_000),
            completed_at: now
          })
        }`
      // Billed: 62 + 1 + 30 = 93 s; the raw durations add up to 91.3 s.
      yield* job(61.2, true)
      yield* job(0.1, true)
      yield* job(30, true)
      // Neither counts: no speech, not finished.
      yield* job(500.5, false)
      yield* job(700.5, true, "processing")
      const figures = yield* (yield* UsageReport).figures(account.id)
      assert.strictEqual(figures.minutesToday, 1.55)
      assert.strictEqual(figures.minutesMonthToDate, 1.55)
      assert.strictEqual(figures.hoursLifetime, 0.0258)
      assert.strictEqual(figures.queueDepth, 1)
    }))
})
