/**
 * A task's wake-up as a cluster entity ("actor"): the entity id is the task id (a row of
 * `tasks`), and its one message, `Run`, tells the runner that owns the task's shard that the
 * task may be due, so it claims work at once (`TaskRunner.wake`) instead of at its next poll.
 * The message carries nothing the engine relies on: what a task is, whether it is due and who
 * runs it live in the task row, and every runner with a free slot claims due tasks from there
 * (see TaskRunner).
 *
 * So `Run` is volatile (not `ClusterSchema.Persisted`): effect/cluster keeps no message or reply
 * row for it. A persisted wake-up bought nothing (a lost one costs at most the runners' 1 s poll)
 * and cost one message row plus one reply row per send, which the cluster never deletes; they
 * were deleted by reading its private tables, which no longer happens. A wake-up that cannot be
 * delivered (its shard has no live owner: a runner just SIGKILLed, or shutting down) is dropped
 * by `Tasks.send` after a short wait, and the task is claimed by the next poll of any runner.
 */
import { Effect } from "effect"
import { Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { TaskRunner } from "./TaskRunner.ts"

export const Run = Rpc.make("Run")

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
