/** How numbers and times read on the pages. */

/** Whole seconds as `m:ss`, or `h:mm:ss` from an hour on. */
export const hms = (whole: number): string => {
  const h = Math.floor(whole / 3600)
  const m = Math.floor((whole % 3600) / 60)
  const s = whole % 60
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}` : `${m}:${String(s).padStart(2, "0")}`
}

export const duration = (seconds: number | null | undefined): string =>
  seconds === null || seconds === undefined ? "–" : hms(Math.round(seconds))

/** Unix seconds or an ISO string as a local date and time. */
export const when = (value: number | string | null | undefined): string => {
  if (value === null || value === undefined) return "–"
  const date = typeof value === "number" ? new Date(value * 1000) : new Date(value)
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString()
}

export const minutes = (value: number): string =>
  value >= 1_000_000 ? "unlimited" : `${value.toLocaleString(undefined, { maximumFractionDigits: 1 })} min`

export const bytes = (value: number): string =>
  value >= 1e9 ? `${(value / 1e9).toFixed(1)} GB` : value >= 1e6 ? `${(value / 1e6).toFixed(1)} MB` : `${Math.ceil(value / 1e3)} kB`
