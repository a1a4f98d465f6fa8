/**
 * Pulls the few facts the link resolver needs out of an HTML page: its title and canonical address,
 * media named in meta tags, <audio>/<video>/<source> elements, JSON-LD blocks and linked feeds.
 * A tolerant tag scanner rather than a DOM: pages are untrusted and often malformed, and only
 * start tags and their attributes matter here. URLs come back absolute, resolved against the page.
 */
import { decodeEntities, splitBlocks } from "./XmlText.ts"

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

export const scanHtml = (html: string, pageUrl: string): PageInfo => {
  const jsonLd: Array<Record<string, unknown>> = []
  // Scripts and styles are cut out first so markup inside them is not mistaken for tags; JSON-LD is kept.
  const withoutComments = splitBlocks(html, "<!--", "-->").filter((part) => !part.inside).map((part) => part.text).join("")
  const withoutScripts = splitBlocks(withoutComments, "<(?:script|style)\\b[^>]{0,4000}>", "</(?:script|style)\\s*>")
    .map((part) => {
      if (!part.inside) return part.text
      const attributes = parseAttributes(part.opener.replace(/^<\w+|>$/g, ""))
      if (/^<script/i.test(part.opener) && attributes.get("type")?.trim().toLowerCase() === "application/ld+json") {
        flattenJsonLd(parseJson(part.text.trim().replace(/^<!\[CDATA\[|\]\]>$/g, "")), jsonLd)
      }
      return ""
    })
    .join("")

  const meta = new Map<string, Array<string>>()
  const feeds: Array<LinkedFeed> = []
  const tagMedia: Array<string> = []
  let canonical: string | undefined
  let hasPasswordField = false
  // The document's own <base href> changes how relative URLs resolve.
  const baseTag = /<base\b([^>]{0,4000})>/i.exec(withoutScripts)
  const base = absolute(baseTag === null ? undefined : parseAttributes(baseTag[1]!).get("href"), pageUrl) ?? pageUrl

  const addMedia = (src: string | undefined) => {
    const url = absolute(src, base)
    if (url !== undefined && !tagMedia.includes(url)) tagMedia.push(url)
  }

  const lower = withoutScripts.toLowerCase()
  for (const match of withoutScripts.matchAll(/<(meta|link|audio|video|source|input)\b([^>]{0,4000})>/gi)) {
    const tag = match[1]!.toLowerCase()
    const attributes = parseAttributes(match[2]!)
    if (tag === "meta") {
      const key = (attributes.get("property") ?? attributes.get("name") ?? attributes.get("itemprop"))?.trim()
        .toLowerCase()
      const content = attributes.get("content")
      if (key !== undefined && content !== undefined) {
        meta.set(key, [...(meta.get(key) ?? []), content.trim()])
      }
    } else if (tag === "link") {
      const rel = (attributes.get("rel") ?? "").toLowerCase().split(/\s+/)
      const href = absolute(attributes.get("href"), base)
      if (href === undefined) continue
      const type = (attributes.get("type") ?? "").trim().toLowerCase()
      if (rel.includes("alternate") && FEED_TYPES.has(type)) {
        if (!feeds.some((feed) => feed.url === href)) feeds.push({ url: href, type, title: attributes.get("title") })
      } else if (rel.includes("canonical") && canonical === undefined) {
        canonical = href
      }
    } else if (tag === "input") {
      if ((attributes.get("type") ?? "").toLowerCase() === "password") hasPasswordField = true
    } else if (tag === "source") {
      // <source> also appears in <picture>; only audio/video parents count.
      // Lower-casing can change a string's length (rare letters), so positions in `lower` are approximate:
      // good enough to find the nearest enclosing element.
      const at = match.index
      const open = Math.max(lower.lastIndexOf("<audio", at), lower.lastIndexOf("<video", at))
      const close = Math.max(lower.lastIndexOf("</audio", at), lower.lastIndexOf("</video", at))
      const picture = lower.lastIndexOf("<picture", at)
      if (open > close && open > picture) addMedia(attributes.get("src"))
    } else {
      addMedia(attributes.get("src"))
    }
  }

  const titleBlock = splitBlocks(withoutScripts, "<title\\b[^>]{0,4000}>", "</title\\s*>").find((part) => part.inside)
  const title = titleBlock === undefined ? undefined : decodeEntities(titleBlock.text.replace(/<[^>]*>/g, "")).trim()

  return {
    title: title === "" ? undefined : title,
    meta,
    canonical,
    tagMedia,
    jsonLd,
    feeds,
    hasPasswordField
  }
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
