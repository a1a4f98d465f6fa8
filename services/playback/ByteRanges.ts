/**
 * How a signed media link answers one GET or HEAD, decided from the file's validators and
 * the request headers (RFC 9110 §13–14), without touching the bytes:
 * - `If-None-Match` (any listed strong ETag, or `*`) → 304; otherwise `If-Modified-Since`
 *   not older than the file → 304 (ignored when `If-None-Match` is present).
 * - `Range: bytes=a-b | a- | -n` → 206 with that slice (an end past the file is clamped);
 *   a range no byte of the file falls in → 416. A list of ranges, another unit or a
 *   malformed header is ignored and the whole file is sent (a server may always do that).
 * - `If-Range` with an ETag or an HTTP date that no longer matches the file turns a range
 *   request into a whole-file 200, so a client never splices two versions.
 */

export interface FileFacts {
  readonly size: number
  /** Strong ETag, quoted. */
  readonly etag: string
  readonly modifiedAt: Date
}

export interface RequestValidators {
  readonly range?: string | undefined
  readonly "if-range"?: string | undefined
  readonly "if-none-match"?: string | undefined
  readonly "if-modified-since"?: string | undefined
}

export type ReplyPlan =
  | { readonly _tag: "Whole" }
  | { readonly _tag: "Slice"; readonly start: number; readonly end: number }
  | { readonly _tag: "NotModified" }
  | { readonly _tag: "Unsatisfiable" }

/** A strong validator from what identifies the stored bytes. */
export const etagOf = (size: number, modifiedAt: Date, key: string): string => {
  let hash = 0x811c9dc5
  for (const char of key) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0
  return `"${size.toString(16)}-${Math.floor(modifiedAt.getTime()).toString(16)}-${hash.toString(16)}"`
}

/** HTTP dates have whole seconds. */
const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

const parseHttpDate = (text: string): Date | undefined => {
  const parsed = Date.parse(text)
  return Number.isNaN(parsed) ? undefined : new Date(parsed)
}

const etagListMatches = (header: string, etag: string) =>
  header.trim() === "*" || header.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag)

const notModified = (facts: FileFacts, request: RequestValidators) => {
  const noneMatch = request["if-none-match"]
  if (noneMatch !== undefined) return etagListMatches(noneMatch, facts.etag)
  const since = request["if-modified-since"]
  const date = since === undefined ? undefined : parseHttpDate(since)
  return date !== undefined && seconds(facts.modifiedAt) <= seconds(date)
}

const rangeStillValid = (facts: FileFacts, ifRange: string | undefined) => {
  if (ifRange === undefined) return true
  const value = ifRange.trim()
  // If-Range takes a strong comparison only.
  if (value.startsWith("\"")) return value === facts.etag
  if (value.startsWith("W/")) return false
  const date = parseHttpDate(value)
  return date !== undefined && seconds(date) === seconds(facts.modifiedAt)
}

const singleRange = /^bytes=(\d*)-(\d*)$/

export const planReply = (facts: FileFacts, request: RequestValidators): ReplyPlan => {
  if (notModified(facts, request)) return { _tag: "NotModified" }
  const header = request.range?.trim()
  if (header === undefined || !rangeStillValid(facts, request["if-range"])) return { _tag: "Whole" }
  const match = singleRange.exec(header.replace(/\s+/g, ""))
  if (match === null) return { _tag: "Whole" }
  const [, first, last] = match
  if (first === "" && last === "") return { _tag: "Whole" }
  if (first === "") {
    // Suffix: the last n bytes.
    const length = Number(last)
    if (length === 0 || facts.size === 0) return { _tag: "Unsatisfiable" }
    return { _tag: "Slice", start: Math.max(0, facts.size - length), end: facts.size - 1 }
  }
  const start = Number(first)
  // `a-b` with b < a is not a valid range at all (ignored); a start past the end is unsatisfiable.
  if (last !== "" && Number(last) < start) return { _tag: "Whole" }
  if (start >= facts.size) return { _tag: "Unsatisfiable" }
  const end = last === "" ? facts.size - 1 : Math.min(Number(last), facts.size - 1)
  return { _tag: "Slice", start, end }
}
