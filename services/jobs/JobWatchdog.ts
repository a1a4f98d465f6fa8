/**
 * Housekeeping, run every 15 seconds by one process of the cluster: the task engine's stall and
 * time-limit checks (a transcription without heartbeat ends `PROCESSING_STALLED`, one past
 * the time limit `PROCESSING_TIMEOUT`, both `retryable: true`; a run that wakes up later
 * cannot overwrite that, its token is stale); jobs deleted more than 24 hours ago are
 * purged with their files, and so are uploads whose ticket expired uncommitted, and media files
 * no row names; ended tasks of purged jobs and job events every consumer has passed are deleted
 * after their retention; webhook deliveries an older process recorded without a task during a
 * rolling upgrade get one (`JobEvents.adoptUntasked`).
 *
 * One process: `JobWatchdogLayer` is an effect/cluster singleton (`Singleton.make`), started
 * by the runner that owns its shard — on embedded storage the only runner; on Postgres one of
 * the processes, another once that one stops (at once on a clean stop, after the shard lock
 * expiry, 12 s by default, after a SIGKILL). Chosen over `ClusterCron`, which stores one
 * persisted cluster message per run (with a 15 s period, 5 760 rows a day that the cluster never
 * deletes), and over running the pass in every process (N times the same statements, and a
 * media-orphan walk per process). The statements stay idempotent anyway: during a hand-over
 * two passes may overlap briefly, and `sweep` is also run directly by tests and tools.
 */
import { Duration, Effect, Schedule } from "effect"
import { Singleton } from "effect/cluster"
import { sweepMediaOrphans } from "../storage/MediaOrphans.ts"
import { MediaStorage } from "../storage/MediaStorage.ts"
import { UploadTickets } from "../uploads/UploadTickets.ts"
import { JobEventFeed } from "../work/JobEventFeed.ts"
import { TaskStore } from "../work/TaskStore.ts"
import { TaskSupervisor } from "../work/TaskSupervisor.ts"
import { JobEvents } from "./JobEvents.ts"
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
  const events = yield* (yield* JobEventFeed).trim
  const adoptedDeliveries = yield* (yield* JobEvents).adoptUntasked()
  return { stuck, purged: purged.length, abandonedUploads: abandoned.length, media, tasks, events, adoptedDeliveries }
}).pipe(Effect.withSpan("JobWatchdog.sweep"))

/** The lines a process logs when housekeeping starts and stops on it (tests count where it runs). */
export const housekeepingStarted = "housekeeping runs on this process"
export const housekeepingStopped = "housekeeping stopped on this process"

export const JobWatchdogLayer = Singleton.make(
  "verbatim/jobs/JobWatchdog",
  Effect.logInfo(housekeepingStarted).pipe(
    Effect.andThen(
      sweep.pipe(
        Effect.catchCause((cause) => Effect.logWarning("job watchdog pass failed", cause)),
        Effect.repeat(Schedule.spaced(Duration.seconds(15)))
      )
    ),
    // Its shard moved to another runner, or this process stops.
    Effect.onInterrupt(() => Effect.logInfo(housekeepingStopped))
  )
)
