/**
 * The kinds this process can run: one handler per kind, registered where the process is
 * composed (layers/). A kind may also be asked whether it is registered, which is how a
 * task hands its job on to a follow-up kind only when that kind exists (transcription →
 * diarization).
 */
import { Context, Effect, Layer } from "effect"
import type { TaskHandler, TaskKind } from "./TaskKind.ts"

export class TaskHandlers extends Context.Service<TaskHandlers, {
  readonly handlers: ReadonlyMap<TaskKind, TaskHandler>
  has(kind: TaskKind): boolean
}>()("verbatim/work/TaskHandlers") {
  static readonly make = (handlers: ReadonlyArray<TaskHandler>) => {
    const byKind = new Map<TaskKind, TaskHandler>()
    for (const handler of handlers) {
      if (byKind.has(handler.kind)) throw new Error(`task kind ${handler.kind} registered twice`)
      byKind.set(handler.kind, handler)
    }
    return TaskHandlers.of({ handlers: byKind, has: (kind) => byKind.has(kind) })
  }

  /** Registers the handlers built by `effects` (each a handler of one kind). */
  static readonly layer = <R>(...effects: ReadonlyArray<Effect.Effect<TaskHandler, never, R>>) =>
    Layer.effect(TaskHandlers, Effect.map(Effect.all(effects), TaskHandlers.make))
}
