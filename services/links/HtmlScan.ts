/**
 * Pulls the few facts the link resolver needs out of an HTML page: its title and canonical address,
 * media named in meta tags, <audio>/<video>/<source> elements, JSON-LD blocks and linked feeds.
 * A tolerant tag scanner rather than a DOM: pages are untrusted and often malformed, and only
 * start tags and their attributes matter here. URLs come back absolute, resolved against the page.
 */
import { tokenize } from "./MarkupTokens.ts"
import { decodeEntities } from "./XmlText.ts"

export interface LinkedFeed {
  readonly url: string
  readonly type: string
  readonly title: string | undefined
}

export interface PageInfo {
  /** <title> text. */
  readonly title: string | undefined
  /** Lower-cased meta property/name → content values, in document order. */
  readonly meta: ReadonlyMap<string, ReadonlyArray<string>>
  /** <link rel="canonical">. */
  readonly canonical: string | undefined
  /** Sources of <audio>/<video> elements and their <source> children, in document order, deduplicated. */
  readonly tagMedia: ReadonlyArray<string>
  /** Parsed JSON-LD blocks (arrays and @graph flattened into single nodes, nested nodes kept). */
  readonly jsonLd: ReadonlyArray<Record<string, unknown>>
  /** <link rel="alternate"> to RSS or Atom. */
  readonly feeds: ReadonlyArray<LinkedFeed>
  /** Whether the page has a password input (a sign-in form). */
  readonly hasPasswordField: boolean
}

const ATTRIBUTE = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g

export const parseAttributes = (text: string): Map<string, string> => {
  const attributes = new Map<string, string>()
  for (const match of text.matchAll(ATTRIBUTE)) {
    const name = match[1]!.toLowerCase()
    if (!attributes.has(name)) attributes.set(name, decodeEntities(match[2] ?? match[3] ?? match[4] ?? ""))
  }
  return attributes
}

const absolute = (value: string | undefined, base: string): string | undefined => {
  const trimmed = value?.trim()
  if (trimmed === undefined || trimmed === "" || !URL.canParse(trimmed, base)) return undefined
  const url = new URL(trimmed, base)
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined
}

const FEED_TYPES = new Set(["application/rss+xml", "application/atom+xml", "application/rdf+xml"])

const flattenJsonLd = (value: unknown, out: Array<Record<string, unknown>>): void => {
  if (Array.isArray(value)) {
    for (const item of value) flattenJsonLd(item, out)
    return
  }
  if (typeof value !== "object" || value === null) return
  const node = value as Record<string, unknown>
  out.push(node)
  if ("@graph" in node) flattenJsonLd(node["@graph"], out)
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const RAW_TEXT = new Set(["script", "style", "textarea", "title"])

export const scanHtml = (html: string, pageUrl: string): PageInfo => {
  const tags = tokenize(html, RAW_TEXT)
  const jsonLd: Array<Record<string, unknown>> = []
  const meta = new Map<string, Array<string>>()
  const feeds: Array<LinkedFeed> = []
  const tagMedia: Array<string> = []
  let canonical: string | undefined
  let title: string | undefined
  let hasPasswordField = false
  // The document's own <base href> changes how relative URLs resolve.
  const baseTag = tags.find((tag) => tag.kind === "open" && tag.name === "base")
  const base = absolute(baseTag === undefined ? undefined : parseAttributes(baseTag.attributes).get("href"), pageUrl) ??
    pageUrl

  const addMedia = (src: string | undefined) => {
    const url = absolute(src, base)
    if (url !== undefined && !tagMedia.includes(url)) tagMedia.push(url)
  }

  // <source> also appears in <picture>; only audio/video parents count.
  let mediaDepth = 0
  let pictureDepth = 0
  for (let i = 0; i < tags.length; i++) {
    const tag = tags[i]!
    if (tag.kind === "close") {
      if (tag.name === "audio" || tag.name === "video") mediaDepth = Math.max(0, mediaDepth - 1)
      if (tag.name === "picture") pictureDepth = Math.max(0, pictureDepth - 1)
      continue
    }
    const next = tags[i + 1]
    const rawText = RAW_TEXT.has(tag.name) && next?.kind === "close" && next.name === tag.name
      ? html.slice(tag.end, next.start)
      : undefined
    switch (tag.name) {
      case "script": {
        const type = parseAttributes(tag.attributes).get("type")?.trim().toLowerCase()
        if (type === "application/ld+json" && rawText !== undefined) {
          flattenJsonLd(parseJson(rawText.trim().replace(/^<!\[CDATA\[|\]\]>$/g, "")), jsonLd)
        }
        break
      }
      case "title": {
        if (title === undefined && rawText !== undefined) {
          const text = decodeEntities(rawText.replace(/<[^>]*>/g, "")).trim()
          if (text !== "") title = text
        }
        break
      }
      case "meta": {
        const attributes = parseAttributes(tag.attributes)
        const key = (attributes.get("property") ?? attributes.get("name") ?? attributes.get("itemprop"))?.trim()
          .toLowerCase()
        const content = attributes.get("content")
        if (key !== undefined && content !== undefined) meta.set(key, [...(meta.get(key) ?? []), content.trim()])
        break
      }
      case "link": {
        const attributes = parseAttributes(tag.attributes)
        const rel = (attributes.get("rel") ?? "").toLowerCase().split(/\s+/)
        const href = absolute(attributes.get("href"), base)
        if (href === undefined) break
        const type = (attributes.get("type") ?? "").trim().toLowerCase()
        if (rel.includes("alternate") && FEED_TYPES.has(type)) {
          if (!feeds.some((feed) => feed.url === href)) feeds.push({ url: href, type, title: attributes.get("title") })
        } else if (rel.includes("canonical") && canonical === undefined) {
          canonical = href
        }
        break
      }
      case "input": {
        if ((parseAttributes(tag.attributes).get("type") ?? "").toLowerCase() === "password") hasPasswordField = true
        break
      }
      case "picture": {
        if (!tag.selfClosing) pictureDepth++
        break
      }
      case "audio":
      case "video": {
        addMedia(parseAttributes(tag.attributes).get("src"))
        if (!tag.selfClosing) mediaDepth++
        break
      }
      case "source": {
        if (mediaDepth > 0 && pictureDepth === 0) addMedia(parseAttributes(tag.attributes).get("src"))
        break
      }
    }
  }

  return { title, meta, canonical, tagMedia, jsonLd, feeds, hasPasswordField }
}

/** The first non-empty value of the first meta key that has one, resolved as a URL when asked. */
export const metaValue = (info: PageInfo, keys: ReadonlyArray<string>): string | undefined => {
  for (const key of keys) {
    const value = info.meta.get(key)?.find((v) => v !== "")
    if (value !== undefined) return value
  }
  return undefined
}

export const resolveAgainst = absolute
