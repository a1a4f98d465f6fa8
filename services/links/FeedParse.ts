/**
 * Reads RSS 2.0, RSS 1.0 (RDF) and Atom feeds far enough to pick an episode: each item's title, link,
 * guid, date and media enclosure. The XML is parsed by htmlparser2 (tolerant of the malformed feeds found
 * in the wild; CDATA is text, so HTML inside descriptions never counts as elements). Not htmlparser2's
 * `parseFeed`/`getFeed`: it drops RSS <enclosure> and Atom rel="enclosure" links (where podcast media
 * is), takes an Atom entry's first link whatever its rel, and dates Atom entries by <updated> only.
 */
import { DomUtils } from "htmlparser2"
import { resolveAgainst } from "./HtmlScan.ts"
import { type MarkupElement, parseMarkup } from "./Markup.ts"

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

type Parent = Pick<MarkupElement, "children">

/** Elements named `name` below `parent` (direct children only when `deep` is false), in document order. */
const elements = (parent: Parent, name: string, deep = true): Array<MarkupElement> =>
  DomUtils.getElementsByTagName(name, parent.children, deep)

const textOf = (parent: Parent, names: ReadonlyArray<string>, deep = true): string | undefined => {
  for (const name of names) {
    for (const element of elements(parent, name, deep)) {
      const text = DomUtils.textContent(element).trim()
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

const enclosureOf = (item: MarkupElement, base: string, atom: boolean): Enclosure | undefined => {
  const candidates: Array<Enclosure> = []
  const add = (url: string | undefined, type: string | undefined, length: string | undefined) => {
    const absolute = resolveAgainst(url, base)
    if (absolute !== undefined && isMediaType(type)) {
      candidates.push({ url: absolute, type: type?.trim() || undefined, length: parseLength(length) })
    }
  }
  if (atom) {
    for (const { attribs } of elements(item, "link")) {
      if ((attribs["rel"] ?? "").toLowerCase() === "enclosure") add(attribs["href"], attribs["type"], attribs["length"])
    }
  } else {
    for (const { attribs } of elements(item, "enclosure")) add(attribs["url"], attribs["type"], attribs["length"])
  }
  if (candidates.length === 0) {
    // Media RSS, used by some video and audio feeds instead of (or besides) enclosures.
    for (const { attribs } of elements(item, "media:content")) {
      const medium = (attribs["medium"] ?? "").toLowerCase()
      if (medium === "audio" || medium === "video" || /^(audio|video)\//i.test(attribs["type"] ?? "")) {
        add(attribs["url"], attribs["type"], attribs["filesize"])
      }
    }
  }
  return candidates[0]
}

const atomLink = (parent: Parent, base: string): string | undefined => {
  for (const { attribs } of elements(parent, "link", false)) {
    if ((attribs["rel"] ?? "alternate").toLowerCase() === "alternate") return resolveAgainst(attribs["href"], base)
  }
  return undefined
}

/** Parses a feed; undefined when the text is neither RSS nor Atom. */
export const parseFeed = (xml: string, feedUrl: string): Feed | undefined => {
  const root = parseMarkup(xml, "xml")
  const rss = elements(root, "rss")[0] ?? elements(root, "rdf:rdf")[0]
  const atomFeed = rss === undefined ? elements(root, "feed")[0] : undefined
  if (rss === undefined && atomFeed === undefined) return undefined
  if (atomFeed !== undefined) {
    const items = elements(atomFeed, "entry").map((entry): FeedItem => ({
      title: textOf(entry, ["title"]),
      link: atomLink(entry, feedUrl),
      guid: textOf(entry, ["id"]),
      publishedAt: parseDate(textOf(entry, ["published", "updated"])),
      enclosure: enclosureOf(entry, feedUrl, true)
    }))
    return {
      title: textOf(atomFeed, ["title"], false),
      link: atomLink(atomFeed, feedUrl),
      items
    }
  }
  const channel = elements(rss!, "channel")[0] ?? rss!
  // RSS 1.0 puts items beside the channel, RSS 2.0 inside it.
  const items = elements(rss!, "item").map((item): FeedItem => ({
    title: textOf(item, ["title"]),
    link: resolveAgainst(textOf(item, ["link"]), feedUrl),
    guid: textOf(item, ["guid"]),
    publishedAt: parseDate(textOf(item, ["pubdate", "dc:date", "published", "updated"])),
    enclosure: enclosureOf(item, feedUrl, false)
  }))
  return {
    title: textOf(channel, ["title"], false),
    link: resolveAgainst(textOf(channel, ["link"], false), feedUrl),
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
