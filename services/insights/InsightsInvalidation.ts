/**
 * Forgets a job's stored insights when its transcript is corrected (`changed`) or the job is
 * deleted (`deleted`), as a consumer of the job event feed: the delete runs in the feed's
 * transaction, so it happens exactly once per event. Reads never serve insights of an older
 * transcript even before this runs (the stored row carries its transcript's hash); this keeps
 * the table from holding what can no longer be served. A restored job generates them again on
 * the next request; a purged job's row goes with it (foreign key cascade).
 */
import { Effect, Option } from "effect"
import { TranscriptStore } from "../jobs/TranscriptStore.ts"
import type { JobEventConsumer } from "../work/JobEventFeed.ts"
import { InsightsStore, transcriptHash } from "./InsightsStore.ts"

export const InsightsInvalidation = Effect.gen(function*() {
  const store = yield* InsightsStore
  const transcripts = yield* TranscriptStore
  return {
    name: "insights-invalidation",
    types: ["changed", "deleted"],
    // A `changed` event may be handled after a request already made insights for the corrected
    // transcript: those are kept (only rows of another transcript go), or they would be made twice.
    handle: (event) =>
      Effect.gen(function*() {
        if (event.type === "deleted") return yield* Effect.as(store.remove(event.job_id), [])
        const current = yield* transcripts.get(event.job_id)
        yield* store.remove(event.job_id, Option.isSome(current) ? transcriptHash(current.value) : undefined)
        return []
      })
  } satisfies JobEventConsumer
})
