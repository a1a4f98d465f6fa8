/**
 * Subtitle timestamps: `HH:MM:SS,mmm` (SRT) and `HH:MM:SS.mmm` (WebVTT). Times are rounded to the
 * millisecond once, so a cue end never prints before its start; hours grow past 99 if needed.
 */
export const timecode = (seconds: number, separator: "," | "."): string => {
  const ms = Math.max(0, Math.round(seconds * 1000))
  const h = Math.floor(ms / 3_600_000)
  const m = Math.floor((ms % 3_600_000) / 60_000)
  const s = Math.floor((ms % 60_000) / 1000)
  const rest = ms % 1000
  const two = (n: number) => String(n).padStart(2, "0")
  return `${two(h)}:${two(m)}:${two(s)}${separator}${String(rest).padStart(3, "0")}`
}

/** `[HH:MM:SS]` label used in documents (and `[MM:SS]` below one hour). */
export const clockLabel = (seconds: number): string => {
  const total = Math.max(0, Math.floor(seconds))
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  const two = (n: number) => String(n).padStart(2, "0")
  return h > 0 ? `${two(h)}:${two(m)}:${two(s)}` : `${two(m)}:${two(s)}`
}
