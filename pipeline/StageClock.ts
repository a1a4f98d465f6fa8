/**
 * Where the pipeline's time goes: wall milliseconds summed per named stage, in the thread that
 * does the work. Always on (a `performance.now()` pair per ONNX run or per window costs nothing
 * next to the run); read by `bench/asr.ts --profile`, which runs the pipeline in-process.
 */

const totals = new Map<string, { ms: number; count: number }>()

export const StageClock = {
  add(stage: string, ms: number): void {
    const t = totals.get(stage)
    if (t === undefined) totals.set(stage, { ms, count: 1 })
    else {
      t.ms += ms
      t.count++
    }
  },
  /** Runs `f` and adds its wall time to `stage`. */
  time<T>(stage: string, f: () => T): T {
    const start = performance.now()
    try {
      return f()
    } finally {
      StageClock.add(stage, performance.now() - start)
    }
  },
  snapshot(): ReadonlyArray<{ readonly stage: string; readonly ms: number; readonly count: number }> {
    return [...totals].map(([stage, t]) => ({ stage, ms: t.ms, count: t.count }))
  },
  reset(): void {
    totals.clear()
  }
}
