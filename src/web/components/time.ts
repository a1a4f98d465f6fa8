import { hms } from "../format.ts"

/** Times in a recording as people read them: `1:05` in lists, `1:05.3` where tenths matter (clip edges). */
export const clock = (seconds: number, tenths = false): string => {
  const safe = Math.max(0, seconds)
  const whole = tenths ? Math.floor(safe) : Math.floor(safe + 1e-6)
  return tenths ? `${hms(whole)}.${Math.floor((safe - whole) * 10)}` : hms(whole)
}

/** The `t` (seconds) of the page's hash (`#/jobs/<id>?t=12.5`), when it has one. */
export const hashTime = (): number | undefined => {
  const query = location.hash.split("?", 2)[1]
  if (query === undefined) return undefined
  const value = Number(new URLSearchParams(query).get("t") ?? Number.NaN)
  return Number.isFinite(value) && value >= 0 ? value : undefined
}

/** Index of the last item starting at or before `t` whose end is after `t`; -1 when none. */
export const activeIndex = (items: ReadonlyArray<{ readonly start: number; readonly end: number }>, t: number): number => {
  let low = 0
  let high = items.length - 1
  let found = -1
  while (low <= high) {
    const mid = (low + high) >> 1
    if (items[mid]!.start <= t) {
      found = mid
      low = mid + 1
    } else {
      high = mid - 1
    }
  }
  return found >= 0 && t < items[found]!.end ? found : -1
}
