/**
 * Housekeeping every working process runs every 15 seconds: the task engine's stall and
 * time-limit checks (a transcription without heartbeat ends `PROCESSING_STALLED`, one past
 * the time limit `PROCESSING_TIMEOUT`, both `retryable: true`; a run that wakes up later
 * cannot overwrite that, its token is stale); jobs deleted more than 24 hours ago are
 * purged with their files, and so are uploads whose ticket expired uncommitted; ended
 * tasks of purged jobs, processed cluster messages and job events every consumer has
 * passed are deleted after their retention. The statements are idempotent, so several
 * processes may run this at once.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { sweepMediaOrphans } from "../storage/MediaOrphans.ts"
import { MediaStorage } from "../storage/MediaStorage.ts"
import { UploadTickets } from "../uploads/UploadTickets.ts"
import { JobEventFeed } from "../work/JobEventFeed.ts"
import { MessageCleanup } from "../work/MessageCleanup.ts"
import { TaskStore } from "../work/TaskStore.ts"
import { TaskSupervisor } from "../work/TaskSupervisor.ts"
import { JobStore } from "./JobStore.ts"

export const sweep = Effect.gen(function*() {
  const store = yield* JobStore
  const storage = yield* MediaStorage
  const tickets = yield* UploadTickets
  const stuck = yield* (yield* TaskSupervisor).sweep
  const purged = yield* store.purgeExpired
  const abandoned = yield* tickets.purgeAbandoned
  yield* Effect.forEach([...purged, ...abandoned], (key) => storage.remove(key), { discard: true })
  const media = yield* sweepMediaOrphans
  const tasks = yield* (yield* TaskStore).purgeOrphans
  const messages = yield* (yield* MessageCleanup).run()
  const events = yield* (yield* JobEventFeed).trim
  return { stuck, purged: purged.length, abandonedUploads: abandoned.length, media, tasks, messages, events }
}).pipe(Effect.withSpan("JobWatchdog.sweep"))

export const JobWatchdogLayer = Layer.effectDiscard(
  sweep.pipe(
    Effect.catchCause((cause) => Effect.logWarning("job watchdog pass failed", cause)),
    Effect.repeat(Schedule.spaced(Duration.seconds(15))),
    Effect.forkScoped
  )
)
