/**
 * Where the diarizer embeds, and how window labels become speaker turns (pure).
 *
 * Windows lie inside one voice-activity region each, so a window never spans a pause (where
 * speakers usually change) and never contains silence: `windowFrames` (10 ms frames) every
 * `hopFrames`, plus one window aligned to the region's end when the regular ones leave a tail;
 * a region shorter than a window gets one window of its own length if it is at least
 * `minFrames` long, and none otherwise.
 *
 * Labelling: every 10 ms speech frame takes the label of the nearest window centre in its own
 * region (a region without windows takes, as a whole, the label of the window nearest its centre). Consecutive frames with
 * one label form a piece; pieces of one speaker separated by at most `mergeGapSeconds` of
 * silence become one turn (so a turn covers a speaker's short pauses, as a reference turn does).
 */
import { HOP, SAMPLE_RATE } from "./VoiceFrontend.ts"

export interface SpeakerTurn {
  /** `SPEAKER_00`, `SPEAKER_01`, … in order of first appearance. */
  readonly speaker: string
  /** Seconds from the start of the audio. */
  readonly start: number
  readonly end: number
}

export interface Region {
  /** Sample bounds, end exclusive. */
  readonly start: number
  readonly end: number
}

export interface WindowPlan {
  readonly region: number
  /** Frame offset in the region's mel. */
  readonly firstFrame: number
  readonly frames: number
  /** Centre in samples of the source. */
  readonly centre: number
}

export interface WindowOptions {
  readonly windowFrames: number
  readonly hopFrames: number
  readonly minFrames: number
}

/**
 * Regions in seconds → sample bounds clipped to the audio, empty ones dropped, ordered, and
 * overlapping or touching ones merged (so no 10 ms frame is labelled twice).
 */
export const toSampleRegions = (
  spans: ReadonlyArray<{ readonly start: number; readonly end: number }>,
  length: number
): Array<Region> => {
  const sorted = spans
    .map((s) => ({
      start: Math.max(0, Math.min(length, Math.round(s.start * SAMPLE_RATE))),
      end: Math.max(0, Math.min(length, Math.round(s.end * SAMPLE_RATE)))
    }))
    .filter((r) => r.end > r.start)
    .sort((a, b) => a.start - b.start)
  const merged: Array<Region> = []
  for (const r of sorted) {
    const last = merged[merged.length - 1]
    if (last && r.start <= last.end) merged[merged.length - 1] = { start: last.start, end: Math.max(last.end, r.end) }
    else merged.push(r)
  }
  return merged
}

export const planWindows = (regions: ReadonlyArray<Region>, options: WindowOptions): Array<WindowPlan> => {
  const plans: Array<WindowPlan> = []
  regions.forEach((r, region) => {
    const frames = Math.floor((r.end - r.start) / HOP)
    const add = (firstFrame: number, length: number) =>
      plans.push({ region, firstFrame, frames: length, centre: r.start + (firstFrame + length / 2) * HOP })
    if (frames < options.minFrames) return
    if (frames <= options.windowFrames) {
      add(0, frames)
      return
    }
    let first = 0
    for (; first + options.windowFrames <= frames; first += options.hopFrames) add(first, options.windowFrames)
    const lastEnd = first - options.hopFrames + options.windowFrames
    if (lastEnd < frames) add(frames - options.windowFrames, options.windowFrames)
  })
  return plans
}

const round2 = (x: number) => Math.round(x * 100) / 100

/**
 * Turns from one cluster label per planned window. Labels are renumbered by first appearance;
 * regions are assumed ordered and not overlapping.
 */
export const labelTurns = (
  regions: ReadonlyArray<Region>,
  windows: ReadonlyArray<WindowPlan>,
  labels: ReadonlyArray<number>,
  mergeGapSeconds: number
): Array<SpeakerTurn> => {
  if (windows.length === 0) return []
  const byRegion = new Map<number, Array<number>>()
  windows.forEach((w, i) => {
    const list = byRegion.get(w.region)
    if (list) list.push(i)
    else byRegion.set(w.region, [i])
  })
  const nearest = (candidates: ReadonlyArray<number>, at: number): number => {
    let best = candidates[0]!
    for (const i of candidates) if (Math.abs(windows[i]!.centre - at) < Math.abs(windows[best]!.centre - at)) best = i
    return best
  }
  // Centres ascend (windows are planned region by region, left to right).
  const nearestAnywhere = (at: number): number => {
    let lo = 0
    let hi = windows.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (windows[mid]!.centre < at) lo = mid + 1
      else hi = mid
    }
    return lo > 0 && at - windows[lo - 1]!.centre < windows[lo]!.centre - at ? lo - 1 : lo
  }
  const pieces: Array<{ label: number; start: number; end: number }> = []
  regions.forEach((r, region) => {
    const candidates = byRegion.get(region)
    const whole = candidates === undefined ? labels[nearestAnywhere((r.start + r.end) / 2)]! : -1
    for (let at = r.start; at < r.end; at += HOP) {
      const end = Math.min(r.end, at + HOP)
      const label = candidates === undefined ? whole : labels[nearest(candidates, (at + end) / 2)]!
      const last = pieces[pieces.length - 1]
      if (last && last.label === label && at - last.end <= mergeGapSeconds * SAMPLE_RATE) last.end = end
      else pieces.push({ label, start: at, end })
    }
  })
  const names = new Map<number, string>()
  return pieces.map((p) => {
    let name = names.get(p.label)
    if (name === undefined) {
      name = `SPEAKER_${String(names.size).padStart(2, "0")}`
      names.set(p.label, name)
    }
    return { speaker: name, start: round2(p.start / SAMPLE_RATE), end: round2(p.end / SAMPLE_RATE) }
  })
}
