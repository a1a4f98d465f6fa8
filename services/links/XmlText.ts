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

/** Text content of an XML fragment: CDATA sections verbatim, markup dropped, references decoded. */
export const xmlText = (fragment: string): string => {
  const parts: Array<string> = []
  const pattern = /<!\[CDATA\[([\s\S]*?)\]\]>/g
  let last = 0
  for (const match of fragment.matchAll(pattern)) {
    parts.push(decodeEntities(fragment.slice(last, match.index).replace(/<[^>]*>/g, "")))
    parts.push(match[1]!)
    last = match.index + match[0].length
  }
  parts.push(decodeEntities(fragment.slice(last).replace(/<[^>]*>/g, "")))
  return parts.join("").trim()
}
