/**
 * A wall clock the test moves by hand, provided only around the calls under test.
 * (Effect's TestClock would also freeze the database pool's own timers, which must keep
 * real time.) Sleeps and monotonic time stay real.
 */
import { Clock, Duration, Effect } from "effect"

export const controlledClock = (startMs: number) => {
  let now = startMs
  const live = Clock.Clock.defaultValue()
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: () => now,
    currentTimeMillis: Effect.sync(() => now),
    currentTimeNanosUnsafe: () => BigInt(now) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(now) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: live.monotonicTimeNanos,
    sleep: (duration) => live.sleep(duration)
  }
  return {
    /** Runs `effect` with this clock as its `Clock`. */
    at: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Clock.Clock, clock),
    advance: (duration: Duration.Input) => {
      now += Duration.toMillis(Duration.fromInputUnsafe(duration))
    },
    get now() {
      return now
    }
  }
}
