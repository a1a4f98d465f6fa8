/**
 * Splitting one decoding pass (tokens with timestamps) into segments, and where the
 * next pass over the same window starts — OpenAI's `transcribe` seek rules:
 * - tokens are cut at every pair of consecutive timestamps;
 * - a pass ending in a single timestamp (or none) consumed its audio completely;
 * - a pass ending otherwise (last pair followed by text or eot) stopped early: the text
 *   after the last pair is dropped and decoding resumes at that pair's time — unless less
 *   than `minResumeSeconds` of audio remains, where a new pass (a full 30 s encoder run)
 *   is not worth it and the tail text is kept as the last segment.
 */

export interface PassSegment {
  /** Seconds relative to the start of the pass audio. */
  readonly start: number
  readonly end: number
  /** Token index range [from, to) in the pass's generated tokens (text tokens only). */
  readonly from: number
  readonly to: number
}

export interface PassSplit {
  readonly segments: Array<PassSegment>
  /** Seconds consumed from the start of the pass audio (= next seek when < duration). */
  readonly consumed: number
  /** True when the pass stopped at a timestamp pair and audio remains to decode. */
  readonly resume: boolean
}

const SECONDS_PER_TS = 0.02

export const splitPass = (
  tokens: ReadonlyArray<number>,
  timestampBegin: number,
  duration: number,
  minResumeSeconds = 0
): PassSplit => {
  const isTs = (t: number) => t >= timestampBegin
  const time = (t: number) => (t - timestampBegin) * SECONDS_PER_TS
  const n = tokens.length
  const singleEnding = n >= 2 ? !isTs(tokens[n - 2]!) && isTs(tokens[n - 1]!) : n === 1 && isTs(tokens[0]!)
  const cuts: Array<number> = []
  for (let i = 1; i < n; i++) if (isTs(tokens[i]!) && isTs(tokens[i - 1]!)) cuts.push(i)
  if (singleEnding) cuts.push(n)

  const segments: Array<PassSegment> = []
  const textRange = (from: number, to: number) => {
    let a = from
    let b = to
    while (a < b && isTs(tokens[a]!)) a++
    while (b > a && isTs(tokens[b - 1]!)) b--
    return [a, b] as const
  }
  if (cuts.length > 0) {
    let last = 0
    for (const cut of cuts) {
      const startTs = tokens[last]!
      const endTs = tokens[cut - 1]!
      const [a, b] = textRange(last, cut)
      const start = isTs(startTs) ? time(startTs) : 0
      const end = isTs(endTs) ? time(endTs) : duration
      if (b > a) segments.push({ start, end: Math.max(start, end), from: a, to: b })
      last = cut
    }
    if (singleEnding) return { segments, consumed: duration, resume: false }
    const lastCut = cuts[cuts.length - 1]!
    const lastPairTime = time(tokens[lastCut - 1]!)
    if (duration - lastPairTime < minResumeSeconds) {
      // Too little audio left to pay for another encoder pass: keep the tail as it is.
      const [a, b] = textRange(lastCut, n)
      if (b > a) segments.push({ start: Math.min(lastPairTime, duration), end: duration, from: a, to: b })
      return { segments, consumed: duration, resume: false }
    }
    return { segments, consumed: lastPairTime, resume: true }
  }
  // No pair: one segment over the whole pass.
  const [a, b] = textRange(0, n)
  const first = n > 0 && isTs(tokens[0]!) ? time(tokens[0]!) : 0
  let lastTs = -1
  for (let i = n - 1; i >= 0; i--) if (isTs(tokens[i]!)) {
    lastTs = tokens[i]!
    break
  }
  const end = lastTs >= 0 && lastTs !== tokens[0] ? time(lastTs) : duration
  if (b > a) segments.push({ start: first, end: Math.max(first, Math.min(end, duration)), from: a, to: b })
  return { segments, consumed: duration, resume: false }
}
