/**
 * Housekeeping every process runs: a processing job whose heartbeat stopped ends
 * `PROCESSING_STALLED`, one that ran past the time limit ends `PROCESSING_TIMEOUT` (both
 * `retryable: true`; a run that wakes up later cannot overwrite that, its token is stale);
 * jobs deleted more than 24 hours ago are purged with their files, and so are uploads
 * whose ticket expired uncommitted. The statements are
 * idempotent, so several processes may run this at once.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { AppConfig } from "../AppConfig.ts"
import { MediaStorage } from "../storage/MediaStorage.ts"
import { UploadTickets } from "../uploads/UploadTickets.ts"
import { JobEvents } from "./JobEvents.ts"
import { JobStore } from "./JobStore.ts"

export const sweep = Effect.gen(function*() {
  const store = yield* JobStore
  const events = yield* JobEvents
  const storage = yield* MediaStorage
  const config = yield* AppConfig
  const tickets = yield* UploadTickets
  const stuck = yield* store.failStuck({
    stalledAfterMs: config.jobStallSeconds * 1000,
    timeoutAfterMs: config.jobTimeoutSeconds * 1000
  })
  // One event that cannot be recorded must neither hide the others nor stop the purge.
  yield* Effect.forEach(
    stuck,
    (job) => events.jobEnded(job).pipe(Effect.catchCause((cause) => Effect.logWarning(`end event of job ${job.id} not recorded`, cause))),
    { discard: true }
  )
  const purged = yield* store.purgeExpired
  const abandoned = yield* tickets.purgeAbandoned
  yield* Effect.forEach([...purged, ...abandoned], (key) => storage.remove(key), { discard: true })
  return { stuck: stuck.length, purged: purged.length, abandonedUploads: abandoned.length }
}).pipe(Effect.withSpan("JobWatchdog.sweep"))

export const JobWatchdogLayer = Layer.effectDiscard(
  sweep.pipe(
    Effect.catchCause((cause) => Effect.logWarning("job watchdog pass failed", cause)),
    Effect.repeat(Schedule.spaced(Duration.seconds(15))),
    Effect.forkScoped
  )
)
