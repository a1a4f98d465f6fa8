/**
 * A task as a cluster entity ("actor"): the entity id is the task id (a row of `tasks`),
 * and its messages ask the task to make progress: `Run` at once, `RunLater` at a given time
 * (a wake-up after a backoff: the cluster stores it with that delivery time and delivers it
 * then, on whichever runner owns the task's shard). Both are persisted, so they survive a
 * crash of the runner that held them and are delivered again by the shard's next owner;
 * `TaskRunner.drive` reads everything it decides from the task row, which makes that safe.
 *
 * Messages of one task run one after another (entity concurrency 1): two messages for the
 * same task (an enqueue racing the start-up reconciler, say) never run at once in the
 * cluster. Different tasks run in parallel, bounded per kind by the runner's pools. A
 * request fiber is forked per message by the entity's server, so a long run holds up
 * nothing but later messages of the same task. (`Rpc.fork` would exempt the handler from
 * that concurrency limit and let duplicates overlap.)
 */
import { DateTime, Effect, Schedule, Schema } from "effect"
import { ClusterSchema, DeliverAt, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { TaskRunner } from "./TaskRunner.ts"

/** `RunLater`'s payload: the cluster delivers the message no earlier than `at`. */
export class WakeAt extends Schema.Class<WakeAt>("verbatim/work/WakeAt")({ at: Schema.DateTimeUtc }) {
  [DeliverAt.symbol]() {
    return this.at
  }
}

export const Run = Rpc.make("Run")
  // Stored in the message table before the sender goes on; replayed after a crash.
  .annotate(ClusterSchema.Persisted, true)
  // An attempt cannot finish within the termination grace period (minutes of audio), so
  // when the shard moves to another runner the attempt is interrupted at once and the
  // message left unanswered for the new owner, instead of holding the hand-off up for
  // `entityTerminationTimeout` (15 s) and being cut off then. (A runner shutting down
  // forces its entities to stop anyway; the message is replayed the same way.)
  .annotate(ClusterSchema.InterruptOnTermination, true)

export const RunLater = Rpc.make("RunLater", { payload: WakeAt })
  .annotate(ClusterSchema.Persisted, true)
  .annotate(ClusterSchema.InterruptOnTermination, true)

export const TaskEntity = Entity.make("Task", [Run, RunLater])

/** An idle task entity holds nothing worth keeping: passivate it soon after its last run. */
export const taskEntityMaxIdleTime = "30 seconds"

/** Registers the `Task` entity on this runner; requires `Sharding` and `TaskRunner`. */
export const TaskEntityLayer = TaskEntity.toLayer(
  Effect.gen(function*() {
    const runner = yield* TaskRunner
    const address = yield* Entity.CurrentAddress
    const taskId = address.entityId
    const self = (yield* TaskEntity.client)(taskId)
    const wake = (at: Date | null) =>
      (at === null
        ? self.Run(undefined, { discard: true })
        : self.RunLater(new WakeAt({ at: DateTime.fromDateUnsafe(at) }), { discard: true })).pipe(
          // A storage hiccup is retried briefly; if the database stays away the task waits for
          // the start-up reconciler (it stays pending), as after a lost enqueue.
          Effect.retry({ schedule: Schedule.exponential("100 millis", 2), times: 4 }),
          Effect.catchCause((cause) => Effect.logWarning(`task ${taskId}: wake-up not stored`, cause))
        )
    return TaskEntity.of({
      Run: () => runner.drive(taskId, wake),
      RunLater: () => runner.drive(taskId, wake)
    })
  }),
  { maxIdleTime: taskEntityMaxIdleTime, concurrency: 1 }
)
