/**
 * Text helpers shared by the HTML scanner and the feed parser: character references and CDATA.
 * Only the references that matter for titles and URLs are named; numeric ones are all handled.
 */

const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: "\"",
  apos: "'",
  nbsp: "\u00a0",
  ndash: "\u2013",
  mdash: "\u2014",
  lsquo: "\u2018",
  rsquo: "\u2019",
  ldquo: "\u201c",
  rdquo: "\u201d",
  hellip: "\u2026"
}

export const decodeEntities = (text: string): string =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith("#")) {
      const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10)
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return NAMED[name.toLowerCase()] ?? whole
  })

/**
 * Splits text into the parts outside and inside blocks delimited by `open` and `close` (case-insensitive
 * patterns without flags). An unclosed block runs to the end. Linear in the text's length, unlike a
 * lazy regex over the whole block, which re-scans to the end for every unclosed opener.
 */
export const splitBlocks = (
  text: string,
  open: string,
  close: string
): Array<{ readonly inside: boolean; readonly text: string; readonly opener: string }> => {
  const parts: Array<{ inside: boolean; text: string; opener: string }> = []
  const openPattern = new RegExp(open, "gi")
  const closePattern = new RegExp(close, "gi")
  let position = 0
  while (position < text.length) {
    openPattern.lastIndex = position
    const opened = openPattern.exec(text)
    if (opened === null) break
    parts.push({ inside: false, text: text.slice(position, opened.index), opener: "" })
    const contentStart = opened.index + opened[0].length
    closePattern.lastIndex = contentStart
    const closed = closePattern.exec(text)
    const contentEnd = closed === null ? text.length : closed.index
    parts.push({ inside: true, text: text.slice(contentStart, contentEnd), opener: opened[0] })
    position = closed === null ? text.length : closed.index + closed[0].length
  }
  if (position < text.length) parts.push({ inside: false, text: text.slice(position), opener: "" })
  return parts
}

/** Text content of an XML fragment: CDATA sections verbatim, markup dropped, references decoded. */
export const xmlText = (fragment: string): string =>
  splitBlocks(fragment, "<!\\[CDATA\\[", "\\]\\]>")
    .map((part) => (part.inside ? part.text : decodeEntities(part.text.replace(/<[^>]*>/g, ""))))
    .join("")
    .trim()
