/**
 * How many jobs this process works on at once. One transcription saturates two cores, so
 * the default is one; a bigger machine raises it (`VERBATIM_WORKERS`).
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
import { Cause, Context, Effect, Fiber, Layer, Semaphore } from "effect"

export interface WorkerPoolShape {
  readonly size: number
  /** Runs `work` once a slot is free and returns when it has ended (never fails). */
  run(label: string, work: Effect.Effect<void, unknown>): Effect.Effect<void>
  /** Runs holding a slot right now. */
  readonly running: Effect.Effect<number>
}

export class WorkerPool extends Context.Service<WorkerPool, WorkerPoolShape>()("verbatim/jobs/WorkerPool") {
  static readonly layer = (options: { readonly size: number }) =>
    Layer.effect(
      WorkerPool,
      Effect.gen(function*() {
        const size = Math.max(1, Math.floor(options.size))
        const scope = yield* Effect.scope
        const slots = yield* Semaphore.make(size)
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
                  const logged = Effect.logError("Job run ended with a failure; the worker slot is released", cause)
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
              Effect.forkIn(slots.withPermit(supervised(label, work)), scope),
              (fiber) => restore(Fiber.join(fiber)).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber)))
            )
          )
        })

        return WorkerPool.of({ size, run, running: Effect.sync(() => running) })
      })
    )
}
