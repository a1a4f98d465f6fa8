/**
 * Entries of an m3u/m3u8 or pls playlist, as absolute http(s) URLs. Used only to tell a single-entry
 * playlist (a wrapper around one stream or file) from a real list of several entries. Line-based and
 * needing no grammar beyond "File<n>=" and "#" comments, so no library is used (none is installed).
 */
import { resolveAgainst } from "./HtmlScan.ts"

export const playlistEntries = (text: string, playlistUrl: string): ReadonlyArray<string> => {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/).map((line) => line.trim())
  const isPls = lines.find((line) => line !== "")?.toLowerCase() === "[playlist]"
  const raw = isPls
    ? lines.flatMap((line) => {
      const match = /^file\d+\s*=\s*(.+)$/i.exec(line)
      return match === null ? [] : [match[1]!]
    })
    : lines.filter((line) => line !== "" && !line.startsWith("#"))
  const entries: Array<string> = []
  for (const entry of raw) {
    const url = resolveAgainst(entry, playlistUrl)
    if (url !== undefined && !entries.includes(url)) entries.push(url)
  }
  return entries
}
