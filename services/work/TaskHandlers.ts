/**
 * The kinds this process can run: one handler per kind, registered where the process is
 * composed (layers/) as ONE list of handler effects (`TaskHandlers.layer([A, B, …])`): the
 * layer's requirements are the union of what the handlers need, so the compiler checks that
 * every kind in the list is provided for, and a name registered twice fails at start. A kind
 * may also be asked whether it is registered, which is how a task hands its job on to a
 * follow-up kind only when that kind exists (transcription → diarization).
 */
import { Context, Effect, Layer } from "effect"
import type { TaskHandler, TaskKind } from "./TaskKind.ts"

/** A handler of one kind, built from the services it needs. */
export type TaskHandlerEffect = Effect.Effect<TaskHandler, never, any>

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

  /** Registers the handlers built by `kinds` (each a handler of one kind). */
  static readonly layer = <const Kinds extends ReadonlyArray<TaskHandlerEffect>>(
    kinds: Kinds
  ): Layer.Layer<TaskHandlers, never, Effect.Services<Kinds[number]>> =>
    Layer.effect(TaskHandlers, Effect.map(Effect.all(kinds as ReadonlyArray<TaskHandlerEffect>), TaskHandlers.make)) as Layer.Layer<
      TaskHandlers,
      never,
      Effect.Services<Kinds[number]>
    >
}
