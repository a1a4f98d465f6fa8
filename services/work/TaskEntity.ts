/**
 * A task as a cluster entity ("actor"): the entity id is the task id (a row of `tasks`),
 * and its one message, `Run`, asks the task to make progress. The message is persisted,
 * so it survives a crash of the runner that held it and is delivered again by whichever
 * runner owns the task's shard next; `TaskRunner.drive` reads everything it decides from
 * the task row, which makes that safe.
 *
 * Messages of one task run one after another (entity concurrency 1): two `Run` messages
 * for the same task (an enqueue racing the start-up reconciler, say) never run at once in
 * the cluster. Different tasks run in parallel, bounded per kind by the runner's pools. A
 * request fiber is forked per message by the entity's server, so a long run holds up
 * nothing but later messages of the same task. (`Rpc.fork` would exempt the handler from
 * that concurrency limit and let duplicates overlap.)
 */
import { Effect } from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { TaskRunner } from "./TaskRunner.ts"

export const Run = Rpc.make("Run")
  // Stored in the message table before the sender goes on; replayed after a crash.
  .annotate(ClusterSchema.Persisted, true)
  // An attempt cannot finish within the termination grace period (minutes of audio), so
  // when the shard moves to another runner the attempt is interrupted at once and the
  // message left unanswered for the new owner, instead of holding the hand-off up for
  // `entityTerminationTimeout` (15 s) and being cut off then. (A runner shutting down
  // forces its entities to stop anyway; the message is replayed the same way.)
  .annotate(ClusterSchema.InterruptOnTermination, true)

export const TaskEntity = Entity.make("Task", [Run])

/** An idle task entity holds nothing worth keeping: passivate it soon after its last run. */
export const taskEntityMaxIdleTime = "30 seconds"

/** Registers the `Task` entity on this runner; requires `Sharding` and `TaskRunner`. */
export const TaskEntityLayer = TaskEntity.toLayer(
  Effect.gen(function*() {
    const runner = yield* TaskRunner
    const address = yield* Entity.CurrentAddress
    const taskId = address.entityId
    return TaskEntity.of({ Run: () => runner.drive(taskId) })
  }),
  { maxIdleTime: taskEntityMaxIdleTime, concurrency: 1 }
)
