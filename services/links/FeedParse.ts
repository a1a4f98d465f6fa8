/**
 * Reads RSS 2.0, RSS 1.0 (RDF) and Atom feeds far enough to pick an episode: each item's title, link,
 * guid, date and media enclosure. Tolerant by design (feeds in the wild are often not well-formed XML);
 * CDATA sections are masked while looking for elements, so HTML inside descriptions never counts.
 */
import { parseAttributes, resolveAgainst } from "./HtmlScan.ts"
import { splitBlocks, xmlText } from "./XmlText.ts"

export interface Enclosure {
  readonly url: string
  readonly type: string | undefined
  readonly length: number | undefined
}

export interface FeedItem {
  readonly title: string | undefined
  readonly link: string | undefined
  readonly guid: string | undefined
  /** Epoch milliseconds of pubDate / published / updated / dc:date, when parseable. */
  readonly publishedAt: number | undefined
  readonly enclosure: Enclosure | undefined
}

export interface Feed {
  readonly title: string | undefined
  /** The show's web page. */
  readonly link: string | undefined
  readonly items: ReadonlyArray<FeedItem>
}

/** Same length as the input, CDATA content blanked, so indexes found in the mask slice the original. */
const maskCdata = (text: string): string =>
  splitBlocks(text, "<!\\[CDATA\\[", "\\]\\]>")
    .map((part) => (part.inside ? " ".repeat(part.opener.length + part.text.length + 3) : part.text))
    .join("")
    .slice(0, text.length)

interface Span {
  readonly attributes: string
  readonly start: number
  readonly end: number
}

/** Elements named exactly `name` (a prefixed name like itunes:title does not match "title"). */
const elements = (masked: string, name: string): Array<Span> => {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const pattern = new RegExp(`<${escaped}(\\s[^>]{0,4000}?)?(/?)>`, "gi")
  const spans: Array<Span> = []
  const lower = masked.toLowerCase()
  for (const open of masked.matchAll(pattern)) {
    const attributes = open[1] ?? ""
    const start = open.index + open[0].length
    if (open[2] === "/") {
      spans.push({ attributes, start, end: start })
      continue
    }
    const close = lower.indexOf(`</${name.toLowerCase()}`, start)
    spans.push({ attributes, start, end: close === -1 ? start : close })
  }
  return spans
}

const firstText = (original: string, masked: string, names: ReadonlyArray<string>): string | undefined => {
  for (const name of names) {
    for (const span of elements(masked, name)) {
      const text = xmlText(original.slice(span.start, span.end))
      if (text !== "") return text
    }
  }
  return undefined
}

const parseDate = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  const value = Date.parse(text.trim())
  return Number.isNaN(value) ? undefined : value
}

const parseLength = (text: string | undefined): number | undefined =>
  text !== undefined && /^\d+$/.test(text.trim()) && Number(text) > 0 ? Number(text) : undefined

const isMediaType = (type: string | undefined): boolean =>
  type === undefined || type === "" || /^(audio|video)\//i.test(type) || /ogg|mp4|mpegurl/i.test(type)

const enclosureOf = (masked: string, base: string, atom: boolean): Enclosure | undefined => {
  const candidates: Array<Enclosure> = []
  const add = (url: string | undefined, type: string | undefined, length: string | undefined) => {
    const absolute = resolveAgainst(url, base)
    if (absolute !== undefined && isMediaType(type)) {
      candidates.push({ url: absolute, type: type?.trim() || undefined, length: parseLength(length) })
    }
  }
  if (atom) {
    for (const span of elements(masked, "link")) {
      const attributes = parseAttributes(span.attributes)
      if ((attributes.get("rel") ?? "").toLowerCase() === "enclosure") {
        add(attributes.get("href"), attributes.get("type"), attributes.get("length"))
      }
    }
  } else {
    for (const span of elements(masked, "enclosure")) {
      const attributes = parseAttributes(span.attributes)
      add(attributes.get("url"), attributes.get("type"), attributes.get("length"))
    }
  }
  if (candidates.length === 0) {
    // Media RSS, used by some video and audio feeds instead of (or besides) enclosures.
    for (const span of elements(masked, "media:content")) {
      const attributes = parseAttributes(span.attributes)
      const medium = (attributes.get("medium") ?? "").toLowerCase()
      if (medium === "audio" || medium === "video" || /^(audio|video)\//i.test(attributes.get("type") ?? "")) {
        add(attributes.get("url"), attributes.get("type"), attributes.get("filesize"))
      }
    }
  }
  return candidates[0]
}

const atomLink = (masked: string, base: string): string | undefined => {
  for (const span of elements(masked, "link")) {
    const attributes = parseAttributes(span.attributes)
    const rel = (attributes.get("rel") ?? "alternate").toLowerCase()
    if (rel === "alternate") return resolveAgainst(attributes.get("href"), base)
  }
  return undefined
}

/** Parses a feed; undefined when the text is neither RSS nor Atom. */
export const parseFeed = (xml: string, feedUrl: string): Feed | undefined => {
  const masked = maskCdata(xml)
  const lower = masked.toLowerCase()
  const atom = /<feed[\s>]/.test(lower) && !/<rss[\s>]/.test(lower)
  if (!atom && !/<rss[\s>]/.test(lower) && !/<rdf:rdf[\s>]/.test(lower)) return undefined
  const itemName = atom ? "entry" : "item"
  const itemSpans = elements(masked, itemName)
  const headEnd = itemSpans.length === 0 ? xml.length : xml.lastIndexOf("<", itemSpans[0]!.start - 1)
  const head = xml.slice(0, headEnd)
  const headMasked = masked.slice(0, headEnd)

  const items = itemSpans.map((span): FeedItem => {
    const original = xml.slice(span.start, span.end)
    const block = masked.slice(span.start, span.end)
    const link = atom ? atomLink(block, feedUrl) : resolveAgainst(firstText(original, block, ["link"]), feedUrl)
    return {
      title: firstText(original, block, ["title"]),
      link,
      guid: firstText(original, block, atom ? ["id"] : ["guid"]),
      publishedAt: parseDate(
        firstText(original, block, atom ? ["published", "updated"] : ["pubDate", "dc:date", "published", "updated"])
      ),
      enclosure: enclosureOf(block, feedUrl, atom)
    }
  })

  return {
    title: firstText(head, headMasked, ["title"]),
    link: atom ? atomLink(headMasked, feedUrl) : resolveAgainst(firstText(head, headMasked, ["link"]), feedUrl),
    items
  }
}

/**
 * The show's latest episode: among items with media, the one with the newest date; when no item has a
 * date, the first item (feeds list newest first by convention).
 */
export const latestEpisode = (feed: Feed): FeedItem | undefined => {
  const playable = feed.items.filter((item) => item.enclosure !== undefined)
  let best: FeedItem | undefined
  for (const item of playable) {
    if (item.publishedAt === undefined) continue
    if (best === undefined || item.publishedAt > best.publishedAt!) best = item
  }
  return best ?? playable[0]
}
