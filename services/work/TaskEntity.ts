/**
 * A task's wake-up as a cluster entity ("actor"): the entity id is the task id (a row of
 * `tasks`), and its one message, `Run`, tells the runner that owns the task's shard that the
 * task may be due, so it claims work at once (`TaskRunner.wake`) instead of at its next poll.
 * The message carries nothing the engine relies on: what a task is, whether it is due and who
 * runs it live in the task row, and every runner with a free slot claims due tasks from there
 * (see TaskRunner). The message is persisted all the same, so the wake-up survives a crash.
 */
import { Effect } from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { TaskRunner } from "./TaskRunner.ts"

export const Run = Rpc.make("Run")
  // Stored in the message table before the sender goes on; replayed after a crash.
  .annotate(ClusterSchema.Persisted, true)

export const TaskEntity = Entity.make("Task", [Run])

/** An idle task entity holds nothing worth keeping: passivate it soon after its last message. */
export const taskEntityMaxIdleTime = "30 seconds"

/** Registers the `Task` entity on this runner; requires `Sharding` and `TaskRunner`. */
export const TaskEntityLayer = TaskEntity.toLayer(
  Effect.gen(function*() {
    const runner = yield* TaskRunner
    return TaskEntity.of({ Run: () => runner.wake })
  }),
  { maxIdleTime: taskEntityMaxIdleTime }
)
