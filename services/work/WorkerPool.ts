/**
 * A bounded set of slots for the attempts of one task kind in this process (the engine
 * makes one per kind, sized by the kind's `concurrency`; for transcription that is
 * `VERBATIM_WORKERS`, default one: one transcription saturates two cores).
 *
 * Each run is a fiber forked into the pool's own scope and holding one of `size` slots
 * while it runs. The pool, not the caller, supervises it:
 * - a failure or defect of the work is logged and ends the run normally, so neither the
 *   caller (a cluster entity) nor the pool is taken down by a broken job;
 * - interrupting the caller (shard moved away, shutdown) interrupts the run, and the
 *   interruption reaches the caller, so a durable message is left for replay instead of
 *   being answered;
 * - closing the pool's layer interrupts every run still in progress.
 */
import { Cause, Effect, Fiber, type Scope, Semaphore } from "effect"

export interface WorkerPoolShape {
  readonly size: number
  /** Runs `work` once a slot is free and returns when it has ended (never fails). */
  run(label: string, work: Effect.Effect<void, unknown>): Effect.Effect<void>
  /** Runs holding a slot right now. */
  readonly running: Effect.Effect<number>
}

/** A pool of `size` slots whose runs live in the current scope. */
export const makeWorkerPool = (size: number): Effect.Effect<WorkerPoolShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const slots = Math.max(1, Math.floor(size))
    const scope = yield* Effect.scope
    const permits = yield* Semaphore.make(slots)
    let running = 0

    const supervised = (label: string, work: Effect.Effect<void, unknown>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          running++
        }),
        () =>
          work.pipe(
            Effect.catchCause((cause) => {
              if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
              const logged = Effect.logError("Task run ended with a failure; the worker slot is released", cause)
              // Interrupted while failing: still an interruption, so the message is replayed.
              return Cause.hasInterrupts(cause) ? Effect.andThen(logged, Effect.interrupt) : logged
            })
          ),
        () =>
          Effect.sync(() => {
            running--
          })
      ).pipe(Effect.annotateLogs({ worker: label }))

    const run = Effect.fn("WorkerPool.run")(function*(label: string, work: Effect.Effect<void, unknown>) {
      yield* Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(
          Effect.forkIn(permits.withPermit(supervised(label, work)), scope),
          (fiber) => restore(Fiber.join(fiber)).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber)))
        )
      )
    })

    return { size: slots, run, running: Effect.sync(() => running) } satisfies WorkerPoolShape
  })
