/**
 * The boundary between durable execution and the work itself. The job runner (a cluster
 * entity per job) calls `process` for a job id whenever the job must make progress — the
 * first time, and again after a crash. `process` must therefore be idempotent: it claims
 * the job in the database, does nothing for a job that already ended, and records the
 * outcome exactly once.
 */
import { Context, type Effect } from "effect"
import type { JobId } from "../../src/contract/domain/Ids.ts"

export class JobProcessor extends Context.Service<JobProcessor, {
  process(jobId: JobId): Effect.Effect<void>
}>()("verbatim/jobs/JobProcessor") {}

/** Jobs that have not ended (queued or processing), oldest first: re-dispatched at start. */
export class UnfinishedJobs extends Context.Service<UnfinishedJobs, {
  readonly list: Effect.Effect<ReadonlyArray<JobId>>
}>()("verbatim/jobs/UnfinishedJobs") {}
