/**
 * Keeps the library index following the jobs, as a consumer of the job event feed: every
 * event of an account's job (finished, changed = transcript corrected, deleted, restored,
 * purged) asks for the job's `index` task, which indexes the job as it then is or removes it
 * (see IndexTask). The task row is stored in the feed's transaction, so no event is lost to a
 * crash. Keyless sample jobs (no account) are never indexed.
 */
import { Effect } from "effect"
import type { JobEventConsumer } from "../work/JobEventFeed.ts"

export const SearchIndexing = Effect.succeed({
  name: "search-index",
  types: ["finished", "changed", "deleted", "restored", "purged"],
  handle: (event) =>
    Effect.succeed(event.account_id === null ? [] : [{ kind: "index" as const, jobId: event.job_id, rerun: "latest" as const }])
} satisfies JobEventConsumer)
