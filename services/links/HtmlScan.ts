/**
 * Pulls the few facts the link resolver needs out of an HTML page: its title and canonical address,
 * media named in meta tags, <audio>/<video>/<source> elements, JSON-LD blocks and linked feeds.
 * Pages are untrusted and often malformed; htmlparser2 (through `scanMarkup`) reads them as a browser
 * would for these purposes: script and style content is text, comments are skipped, attribute values are
 * decoded. Streamed rather than built into a DOM: a 5 MB page of small elements is a few hundred
 * thousand nodes. URLs come back absolute, resolved against the page (or its <base href>).
 */
import { scanMarkup } from "./Markup.ts"

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

const lower = (value: string | undefined): string => (value ?? "").trim().toLowerCase()

export const scanHtml = (html: string, pageUrl: string): PageInfo => {
  const jsonLd: Array<Record<string, unknown>> = []
  const meta = new Map<string, Array<string>>()
  // Raw values, resolved once the whole page (and so its <base href>) has been read.
  let baseHref: string | undefined
  let sawBase = false
  const mediaSources: Array<string | undefined> = []
  const links: Array<Record<string, string>> = []
  let title: string | undefined
  let hasPasswordField = false
  // <source> also appears in <picture>; only audio/video parents count.
  let mediaDepth = 0
  let pictureDepth = 0
  let capturing: "title" | "json-ld" | undefined
  let captured = ""

  scanMarkup(html, {
    onopentag: (name, attributes) => {
      switch (name) {
        case "base": {
          if (!sawBase) baseHref = attributes["href"]
          sawBase = true
          break
        }
        case "title": {
          if (title !== undefined) break
          capturing = "title"
          captured = ""
          break
        }
        case "script": {
          if (lower(attributes["type"]) !== "application/ld+json") break
          capturing = "json-ld"
          captured = ""
          break
        }
        case "meta": {
          const key = lower(attributes["property"] ?? attributes["name"] ?? attributes["itemprop"])
          const content = attributes["content"]?.trim()
          if (key === "" || content === undefined) break
          const values = meta.get(key)
          if (values === undefined) meta.set(key, [content])
          else values.push(content)
          break
        }
        case "link": {
          links.push(attributes)
          break
        }
        case "input": {
          if (lower(attributes["type"]) === "password") hasPasswordField = true
          break
        }
        case "picture": {
          pictureDepth++
          break
        }
        case "audio":
        case "video": {
          mediaSources.push(attributes["src"])
          mediaDepth++
          break
        }
        case "source": {
          if (mediaDepth > 0 && pictureDepth === 0) mediaSources.push(attributes["src"])
          break
        }
      }
    },
    ontext: (text) => {
      if (capturing !== undefined) captured += text
    },
    onclosetag: (name) => {
      if (name === "audio" || name === "video") mediaDepth--
      if (name === "picture") pictureDepth--
      if (capturing === "title" && name === "title") {
        const text = captured.trim()
        if (text !== "") title = text
      } else if (capturing === "json-ld" && name === "script") {
        flattenJsonLd(parseJson(captured.trim().replace(/^<!\[CDATA\[|\]\]>$/g, "")), jsonLd)
      } else {
        return
      }
      capturing = undefined
    }
  }, "html")

  const base = absolute(baseHref, pageUrl) ?? pageUrl
  const tagMedia = [...new Set(mediaSources.map((src) => absolute(src, base)).filter((url) => url !== undefined))]
  const feeds: Array<LinkedFeed> = []
  let canonical: string | undefined
  for (const attributes of links) {
    const rel = lower(attributes["rel"]).split(/\s+/)
    const href = absolute(attributes["href"], base)
    if (href === undefined) continue
    const type = lower(attributes["type"])
    if (rel.includes("alternate") && FEED_TYPES.has(type)) {
      if (!feeds.some((feed) => feed.url === href)) feeds.push({ url: href, type, title: attributes["title"] })
    } else if (rel.includes("canonical") && canonical === undefined) {
      canonical = href
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
