/**
 * Reads RSS 2.0, RSS 1.0 (RDF) and Atom feeds far enough to pick an episode: each item's title, link,
 * guid, date and media enclosure. Tolerant by design (feeds in the wild are often not well-formed XML);
 * CDATA sections are not tokenized, so HTML inside descriptions never counts as elements.
 */
import { parseAttributes, resolveAgainst } from "./HtmlScan.ts"
import { buildTree, type Element, findAll } from "./MarkupTokens.ts"
import { xmlText } from "./XmlText.ts"

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

const childText = (xml: string, parent: Element, names: ReadonlyArray<string>): string | undefined => {
  for (const name of names) {
    for (const element of findAll(parent, name)) {
      const text = xmlText(xml.slice(element.contentStart, element.contentEnd))
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

const enclosureOf = (item: Element, base: string, atom: boolean): Enclosure | undefined => {
  const candidates: Array<Enclosure> = []
  const add = (url: string | undefined, type: string | undefined, length: string | undefined) => {
    const absolute = resolveAgainst(url, base)
    if (absolute !== undefined && isMediaType(type)) {
      candidates.push({ url: absolute, type: type?.trim() || undefined, length: parseLength(length) })
    }
  }
  if (atom) {
    for (const link of findAll(item, "link")) {
      const attributes = parseAttributes(link.attributes)
      if ((attributes.get("rel") ?? "").toLowerCase() === "enclosure") {
        add(attributes.get("href"), attributes.get("type"), attributes.get("length"))
      }
    }
  } else {
    for (const enclosure of findAll(item, "enclosure")) {
      const attributes = parseAttributes(enclosure.attributes)
      add(attributes.get("url"), attributes.get("type"), attributes.get("length"))
    }
  }
  if (candidates.length === 0) {
    // Media RSS, used by some video and audio feeds instead of (or besides) enclosures.
    for (const content of findAll(item, "media:content")) {
      const attributes = parseAttributes(content.attributes)
      const medium = (attributes.get("medium") ?? "").toLowerCase()
      if (medium === "audio" || medium === "video" || /^(audio|video)\//i.test(attributes.get("type") ?? "")) {
        add(attributes.get("url"), attributes.get("type"), attributes.get("filesize"))
      }
    }
  }
  return candidates[0]
}

const atomLink = (parent: Element, base: string): string | undefined => {
  for (const link of parent.children.filter((child) => child.name === "link")) {
    const attributes = parseAttributes(link.attributes)
    const rel = (attributes.get("rel") ?? "alternate").toLowerCase()
    if (rel === "alternate") return resolveAgainst(attributes.get("href"), base)
  }
  return undefined
}

/** Parses a feed; undefined when the text is neither RSS nor Atom. */
export const parseFeed = (xml: string, feedUrl: string): Feed | undefined => {
  const root = buildTree(xml)
  const rss = findAll(root, "rss")[0] ?? findAll(root, "rdf:rdf")[0]
  const atomFeed = rss === undefined ? findAll(root, "feed")[0] : undefined
  if (rss === undefined && atomFeed === undefined) return undefined
  if (atomFeed !== undefined) {
    const items = findAll(atomFeed, "entry").map((entry): FeedItem => ({
      title: childText(xml, entry, ["title"]),
      link: atomLink(entry, feedUrl),
      guid: childText(xml, entry, ["id"]),
      publishedAt: parseDate(childText(xml, entry, ["published", "updated"])),
      enclosure: enclosureOf(entry, feedUrl, true)
    }))
    return {
      title: directText(xml, atomFeed, "title"),
      link: atomLink(atomFeed, feedUrl),
      items
    }
  }
  const channel = findAll(rss!, "channel")[0] ?? rss!
  // RSS 1.0 puts items beside the channel, RSS 2.0 inside it.
  const items = findAll(rss!, "item").map((item): FeedItem => ({
    title: childText(xml, item, ["title"]),
    link: resolveAgainst(childText(xml, item, ["link"]), feedUrl),
    guid: childText(xml, item, ["guid"]),
    publishedAt: parseDate(childText(xml, item, ["pubdate", "dc:date", "published", "updated"])),
    enclosure: enclosureOf(item, feedUrl, false)
  }))
  return {
    title: directText(xml, channel, "title"),
    link: resolveAgainst(directText(xml, channel, "link"), feedUrl),
    items
  }
}

/** Text of a direct child (not of one nested in an item or image). */
const directText = (xml: string, parent: Element, name: string): string | undefined => {
  for (const child of parent.children) {
    if (child.name !== name) continue
    const text = xmlText(xml.slice(child.contentStart, child.contentEnd))
    if (text !== "") return text
  }
  return undefined
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
