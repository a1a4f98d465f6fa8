/**
 * Diarization error rate, NIST style, on a 10 ms grid:
 *   DER = (missed speech + false alarm speech + speaker confusion) / reference speech,
 * each counted per frame and speaker (a frame with 2 reference speakers counts twice).
 * Hypothesis speakers are mapped one-to-one onto reference speakers by the mapping with the
 * largest total overlap (exhaustive search: fine for the handful of speakers in tests).
 * Frames within `collar` seconds of a reference turn's start or end are not scored
 * (md-eval's collar, commonly 0.25 s): boundaries of hand-made references are uncertain.
 */

export interface Turn {
  readonly speaker: string
  readonly start: number
  readonly end: number
}

export interface DerResult {
  readonly der: number
  readonly missed: number
  readonly falseAlarm: number
  readonly confusion: number
  /** Scored reference speech in seconds. */
  readonly total: number
  /** Hypothesis speaker → reference speaker. */
  readonly mapping: ReadonlyMap<string, string>
}

const STEP = 0.01

const bestMapping = (hyp: ReadonlyArray<string>, ref: ReadonlyArray<string>, overlap: (h: string, r: string) => number) => {
  let best = { score: -1, pairs: new Map<string, string>() }
  const search = (i: number, used: Set<string>, pairs: Map<string, string>, score: number) => {
    if (i === hyp.length) {
      if (score > best.score) best = { score, pairs: new Map(pairs) }
      return
    }
    search(i + 1, used, pairs, score)
    for (const r of ref) {
      if (used.has(r)) continue
      used.add(r)
      pairs.set(hyp[i]!, r)
      search(i + 1, used, pairs, score + overlap(hyp[i]!, r))
      pairs.delete(hyp[i]!)
      used.delete(r)
    }
  }
  search(0, new Set(), new Map(), 0)
  return best.pairs
}

export const diarizationErrorRate = (
  reference: ReadonlyArray<Turn>,
  hypothesis: ReadonlyArray<Turn>,
  collar = 0
): DerResult => {
  const end = Math.max(0, ...reference.map((t) => t.end), ...hypothesis.map((t) => t.end))
  const frames = Math.ceil(end / STEP)
  const at = (t: number) => (t + 0.5) * STEP
  const speakersAt = (turns: ReadonlyArray<Turn>, time: number) =>
    [...new Set(turns.filter((t) => t.start <= time && time < t.end).map((t) => t.speaker))]
  const scored = (time: number) =>
    !reference.some((t) => Math.abs(time - t.start) < collar || Math.abs(time - t.end) < collar)

  const grid: Array<{ ref: Array<string>; hyp: Array<string> }> = []
  for (let i = 0; i < frames; i++) {
    const time = at(i)
    if (scored(time)) grid.push({ ref: speakersAt(reference, time), hyp: speakersAt(hypothesis, time) })
  }
  const hypSpeakers = [...new Set(hypothesis.map((t) => t.speaker))]
  const refSpeakers = [...new Set(reference.map((t) => t.speaker))]
  const overlap = (h: string, r: string) => grid.filter((g) => g.hyp.includes(h) && g.ref.includes(r)).length
  const mapping = bestMapping(hypSpeakers, refSpeakers, overlap)

  let missed = 0
  let falseAlarm = 0
  let confusion = 0
  let total = 0
  for (const g of grid) {
    const nRef = g.ref.length
    const nHyp = g.hyp.length
    const correct = g.hyp.filter((h) => {
      const r = mapping.get(h)
      return r !== undefined && g.ref.includes(r)
    }).length
    total += nRef
    missed += Math.max(0, nRef - nHyp)
    falseAlarm += Math.max(0, nHyp - nRef)
    confusion += Math.min(nRef, nHyp) - correct
  }
  const seconds = (n: number) => Math.round(n * STEP * 100) / 100
  return {
    der: total === 0 ? 0 : (missed + falseAlarm + confusion) / total,
    missed: seconds(missed),
    falseAlarm: seconds(falseAlarm),
    confusion: seconds(confusion),
    total: seconds(total),
    mapping
  }
}
