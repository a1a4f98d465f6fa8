/**
 * Forgets a job's stored insights when its transcript is corrected (`changed`) or the job is
 * deleted (`deleted`), as a consumer of the job event feed: the delete runs in the feed's
 * transaction, so it happens exactly once per event. Reads never serve insights of an older
 * transcript even before this runs (the stored row carries its transcript's hash); this keeps
 * the table from holding what can no longer be served. A restored job generates them again on
 * the next request; a purged job's row goes with it (foreign key cascade).
 */
import { Effect } from "effect"
import type { JobEventConsumer } from "../work/JobEventFeed.ts"
import { InsightsStore } from "./InsightsStore.ts"

export const InsightsInvalidation = Effect.gen(function*() {
  const store = yield* InsightsStore
  return {
    name: "insights-invalidation",
    types: ["changed", "deleted"],
    handle: (event) => Effect.as(store.remove(event.job_id), [])
  } satisfies JobEventConsumer
})
