/**
 * An account's view over its jobs: a page of the list (newest first, with the total) and
 * the batch status call. Ids of other accounts' jobs read as not found. `status: "deleted"`
 * pages through the account's restorable deleted jobs instead (most recently deleted first),
 * each with when it was deleted and until when restore works.
 */
import { Context, Effect, Layer } from "effect"
import type { BatchStatus } from "../../src/contract/api/JobsApi.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import type { JobListStatus } from "../../src/contract/api/JobsApi.ts"
import type { JobList } from "../../src/contract/domain/Job.ts"
import { JobStore, restoreWindowMs } from "../jobs/JobStore.ts"
import { toJobView } from "../jobs/JobViews.ts"

export interface ListQuery {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  readonly status?: JobListStatus | undefined
}

export class JobQueries extends Context.Service<JobQueries, {
  /** `unlockUrl` is shown on locked jobs. */
  list(accountId: AccountId, query: ListQuery, unlockUrl: string): Effect.Effect<typeof JobList.Type>
  batchStatus(accountId: AccountId, ids: ReadonlyArray<string>): Effect.Effect<typeof BatchStatus.Type>
}>()("verbatim/access/JobQueries") {
  static readonly layer = Layer.effect(
    JobQueries,
    Effect.gen(function*() {
      const store = yield* JobStore

      const list = Effect.fn("JobQueries.list")(function*(accountId: AccountId, query: ListQuery, unlockUrl: string) {
        const limit = query.limit ?? 20
        const offset = query.offset ?? 0
        if (query.status === "deleted") {
          const deleted = yield* store.listDeleted(accountId, { limit, offset })
          const jobs = deleted.jobs.map((job) => {
            const deletedAt = job.deleted_at!.getTime()
            return {
              // Not in the queue while deleted: no position.
              ...toJobView(job, 0, unlockUrl),
              deleted_at: Math.floor(deletedAt / 1000),
              restorable_until: Math.floor((deletedAt + restoreWindowMs) / 1000)
            }
          })
          return { jobs, limit, offset, count: jobs.length, total: deleted.total }
        }
        const page = yield* store.list(accountId, { limit, offset, status: query.status })
        const positions = yield* store.queuePositions(page.jobs)
        const jobs = page.jobs.map((job) => toJobView(job, positions.get(job.id) ?? 0, unlockUrl))
        return { jobs, limit, offset, count: jobs.length, total: page.total }
      })

      const batchStatus = Effect.fn("JobQueries.batchStatus")(function*(accountId: AccountId, raw: ReadonlyArray<string>) {
        const ids = [...new Set(raw)].map((id) => JobId.make(id))
        const found = (yield* store.getMany(ids)).filter((job) => job.account_id === accountId)
        const byId = new Set<string>(found.map((job) => job.id))
        return {
          jobs: found.map((job) => ({
            job_id: job.id,
            status: job.status,
            progress: job.status === "done" ? 100 : job.progress,
            locked: job.locked,
            ...(job.status === "failed" ? { error_code: job.error_code ?? "SERVICE_ERROR" } : {})
          })),
          not_found: ids.filter((id) => !byId.has(id))
        }
      })

      return JobQueries.of({ list, batchStatus })
    })
  )
}
