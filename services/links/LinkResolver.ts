/**
 * Turns a submitted link into one media file (spec, Endpoint rule 5), in two moments:
 *
 * 1. `resolve(url)` runs inside `POST /v1/transcribe/url`, before a job exists, and either returns the
 *    media to transcribe or refuses with `LinkRefused` (400, nothing queued, nothing charged):
 *    - not a full http(s) link, or length outside 8..2000 → BAD_URL
 *    - profile / channel / playlist / set links, playlists with several entries, pages whose JSON-LD is a
 *      list → LINK_IS_A_LIST
 *    - a direct media link → that media
 *    - an RSS/Atom feed, or a show page that links one → the latest episode
 *    - an episode page → its media, from JSON-LD, og:audio / twitter:player:stream / og:video, a single
 *      <audio>/<video>, or the item of its linked feed that matches the page; unidentifiable → EPISODE_UNKNOWN
 *    - unfetchable, private or blocked addresses, sign-in walls, 401/403 → UNSUPPORTED_HOST; 404/410 → SOURCE_GONE
 *    Resolution reads pages and feeds and only the first bytes of media (to confirm it is media).
 *
 * 2. `download(resolved, destPath)` runs in the worker after the job was queued and streams the media to
 *    a file; failures are `SourceFailed` with the spec's job `error_code` and `retryable`.
 */
import { rm } from "node:fs/promises"
import { Context, Effect, Layer, Result, Schema } from "effect"
import { mimeOf } from "./ContentSniff.ts"
import { type Feed, type FeedItem, latestEpisode, parseFeed } from "./FeedParse.ts"
import { metaValue, type PageInfo, resolveAgainst, scanHtml } from "./HtmlScan.ts"
import { LinkRefused, type RefusalCode, SourceFailed } from "./LinkErrors.ts"
import { isListLink } from "./ListLinks.ts"
import { playlistEntries } from "./PlaylistParse.ts"
import { type FetchError, type PeekResult, SafeFetcher, type SafeFetcherConfig } from "./SafeFetcher.ts"

/** The media a link stands for. Stored with the queued job; the worker hands it back to `download`. */
export const ResolvedMedia = Schema.Struct({
  /** The URL to download (as found; redirects are followed again at download time). */
  mediaUrl: Schema.String,
  /** Episode or page title, when known. */
  title: Schema.optionalKey(Schema.String),
  /** A file name for display: from Content-Disposition or the URL's last path segment. */
  filename: Schema.optionalKey(Schema.String),
  /** MIME type without parameters, as declared by the feed or the server. */
  contentType: Schema.optionalKey(Schema.String),
  /** Size as declared by the server or the feed; the download may differ. */
  sizeBytes: Schema.optionalKey(Schema.Int)
})
export type ResolvedMedia = typeof ResolvedMedia.Type

export interface DownloadedMedia {
  readonly path: string
  readonly bytes: number
  readonly contentType: string | undefined
  /** The URL that served the bytes, after redirects. */
  readonly finalUrl: string
}

const ACCEPT_ANY = "text/html,application/xhtml+xml,application/rss+xml,application/atom+xml;q=0.9,*/*;q=0.8"
const ACCEPT_MEDIA = "audio/*,video/*;q=0.9,*/*;q=0.5"
/** Candidate media URLs probed on one page before giving up on its metadata. */
const MAX_CANDIDATES = 4

const EPISODE_TYPES = new Set([
  "podcastepisode",
  "episode",
  "radioepisode",
  "tvepisode",
  "audioobject",
  "videoobject",
  "mediaobject",
  "musicrecording",
  "clip"
])
const LIST_TYPES = new Set(["itemlist", "playlist", "musicplaylist", "profilepage", "musicalbum", "podcastseason"])
const SERIES_TYPES = new Set(["podcastseries", "radioseries", "tvseries", "creativeworkseries"])

const refuse = (code: RefusalCode, message: string) => new LinkRefused({ code, message })

const typesOf = (node: Record<string, unknown>): Array<string> => {
  const type = node["@type"]
  const list = Array.isArray(type) ? type : [type]
  return list.filter((t): t is string => typeof t === "string").map((t) => t.replace(/^.*[/:]/, "").toLowerCase())
}

const hasTypeIn = (types: ReadonlySet<string>) => (node: Record<string, unknown>) =>
  typesOf(node).some((t) => types.has(t))

const asString = (value: unknown): string | undefined => (typeof value === "string" && value.trim() !== "" ? value.trim() : undefined)

/** Media URLs an episode-like JSON-LD node names: its own contentUrl, or that of its media sub-objects. */
const jsonLdMediaUrls = (node: Record<string, unknown>): Array<string> => {
  const urls: Array<string> = []
  const fromMediaObject = (value: unknown) => {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item === "string") urls.push(item)
      else if (typeof item === "object" && item !== null) {
        const contentUrl = asString((item as Record<string, unknown>)["contentUrl"])
        if (contentUrl !== undefined) urls.push(contentUrl)
      }
    }
  }
  const own = asString(node["contentUrl"])
  if (own !== undefined) urls.push(own)
  for (const key of ["associatedMedia", "audio", "video", "encoding"]) fromMediaObject(node[key])
  return urls
}

/** A comparable form of a URL: scheme, "www.", fragment, trailing slash and tracking parameters ignored. */
const comparableUrl = (text: string | undefined): string | undefined => {
  if (text === undefined || !URL.canParse(text)) return undefined
  const url = new URL(text)
  for (const key of [...url.searchParams.keys()]) {
    if (/^(utm_|fbclid$|gclid$|ref$|source$)/i.test(key)) url.searchParams.delete(key)
  }
  const path = url.pathname.replace(/\/+$/, "")
  return `${url.hostname.replace(/^www\./, "")}${path}${url.search}`
}

const comparableTitle = (text: string | undefined): string | undefined => {
  const normalised = text?.toLowerCase().normalize("NFKC").replace(/[^\p{L}\p{N}]+/gu, " ").trim()
  return normalised === undefined || normalised === "" ? undefined : normalised
}

const fileNameOf = (url: string): string | undefined => {
  if (!URL.canParse(url)) return undefined
  const last = new URL(url).pathname.split("/").pop() ?? ""
  let name = last
  try {
    name = decodeURIComponent(last)
  } catch {
    // keep the raw segment
  }
  return /\.[a-z0-9]{2,5}$/i.test(name) ? name : undefined
}

const decodeText = (peek: PeekResult): string => {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(peek.contentType ?? "")?.[1]
  try {
    return new TextDecoder(charset ?? "utf-8").decode(peek.body)
  } catch {
    return new TextDecoder("utf-8").decode(peek.body)
  }
}

const isMediaMime = (mime: string | undefined) => mime !== undefined && /^(audio|video)\//.test(mime)

/** A refusal for a fetch that failed while resolving; `what` names the thing fetched ("The link", "The feed"). */
const refusalFor = (what: string) => (error: FetchError): LinkRefused => {
  switch (error.reason) {
    case "HttpStatus": {
      const status = error.status ?? 0
      if (status === 404 || status === 410) return refuse("SOURCE_GONE", `${what} no longer exists (HTTP ${status}).`)
      if (status === 401 || status === 403 || status === 407) {
        return refuse("UNSUPPORTED_HOST", `${what} is private or needs a sign-in (HTTP ${status}).`)
      }
      return refuse("UNSUPPORTED_HOST", `${what} could not be fetched (HTTP ${status}).`)
    }
    case "BlockedAddress":
    case "BlockedPort":
    case "InvalidUrl":
      return refuse("UNSUPPORTED_HOST", `${what} cannot be fetched: ${error.message}`)
    case "DnsFailed":
      return refuse("UNSUPPORTED_HOST", `${what} points to a host that does not exist: ${error.message}`)
    case "TooLarge":
      return refuse("UNSUPPORTED_HOST", `${what} is a page or feed too large to read.`)
    default:
      return refuse("UNSUPPORTED_HOST", `${what} could not be fetched: ${error.message}`)
  }
}

/** The job failure for a fetch that failed while downloading. */
const sourceFailureFor = (error: FetchError): SourceFailed => {
  const fail = (code: SourceFailed["code"], message: string, retryable: boolean) =>
    new SourceFailed({
      code,
      message,
      retryable,
      ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds })
    })
  switch (error.reason) {
    case "HttpStatus": {
      const status = error.status ?? 0
      if (status === 429) return fail("SOURCE_RATE_LIMITED", "The source is limiting requests (HTTP 429); try again later.", true)
      if (status === 401 || status === 403 || status === 407) {
        return fail("SOURCE_ACCESS_DENIED", `The source refused access to the media (HTTP ${status}).`, false)
      }
      if (status === 451) return fail("SOURCE_PROTECTED", "The media is not available for legal reasons (HTTP 451).", false)
      if (status >= 500) return fail("SOURCE_UNAVAILABLE", `The source failed to serve the media (HTTP ${status}).`, true)
      return fail("SOURCE_UNAVAILABLE", `The media is no longer available (HTTP ${status}).`, false)
    }
    case "TooLarge":
      return fail("SOURCE_TOO_LARGE", `The media is larger than the size limit: ${error.message}`, false)
    case "Unreachable":
    case "Timeout":
    case "DnsFailed":
      return fail("SOURCE_UNREACHABLE", `The media could not be reached: ${error.message}`, true)
    case "BadResponse":
      return fail("SOURCE_UNAVAILABLE", `The source sent a broken response: ${error.message}`, true)
    default:
      return fail("SOURCE_UNAVAILABLE", `The media cannot be fetched: ${error.message}`, false)
  }
}

/** Paths that sign-in walls redirect to. */
const SIGN_IN_PATH = /(^|\/)(login|log-in|signin|sign-in|sign_in|sso|auth|authorize|session\/new|accounts?\/login)(\/|$)/i

export class LinkResolver extends Context.Service<LinkResolver, {
  /** Resolves a submitted link to one media file, or refuses it (see the module comment for the rules). */
  resolve(url: string): Effect.Effect<ResolvedMedia, LinkRefused>
  /**
   * Streams resolved media to `destPath` (created or truncated; removed again on failure). Fails with
   * SOURCE_UNSUPPORTED when the bytes are not audio or video and NO_AUDIO when the body is empty.
   */
  download(resolved: ResolvedMedia, destPath: string): Effect.Effect<DownloadedMedia, SourceFailed>
}>()("verbatim/links/LinkResolver") {
  static readonly layerNoDeps: Layer.Layer<LinkResolver, never, SafeFetcher> = Layer.effect(
    LinkResolver,
    Effect.gen(function*() {
      const fetcher = yield* SafeFetcher

      const peekAs = (what: string, url: string, accept: string) =>
        fetcher.peek(url, { accept }).pipe(Effect.mapError(refusalFor(what)))

      const fromMediaPeek = (
        mediaUrl: string,
        peek: PeekResult,
        hints: { readonly title?: string | undefined; readonly contentType?: string | undefined; readonly sizeBytes?: number | undefined }
      ): ResolvedMedia => {
        const servedMime = mimeOf(peek.contentType)
        const contentType = isMediaMime(servedMime) ? servedMime : mimeOf(hints.contentType) ?? servedMime
        const filename = peek.dispositionFilename ?? fileNameOf(peek.url) ?? fileNameOf(mediaUrl)
        const sizeBytes = peek.contentLength ?? hints.sizeBytes
        return {
          mediaUrl,
          ...(hints.title === undefined ? {} : { title: hints.title }),
          ...(filename === undefined ? {} : { filename }),
          ...(contentType === undefined ? {} : { contentType }),
          ...(sizeBytes === undefined ? {} : { sizeBytes })
        }
      }

      /**
       * Confirms that a URL found in a page or feed serves media. Undefined when it serves something else
       * (og:video often names an HTML player); a refusal when it cannot be fetched at all.
       */
      const confirmMedia = Effect.fnUntraced(function*(
        url: string,
        hints: { readonly title?: string | undefined; readonly contentType?: string | undefined; readonly sizeBytes?: number | undefined }
      ) {
        const peek = yield* peekAs("The episode's media", url, ACCEPT_MEDIA)
        if (peek.kind === "media" || (peek.kind === "unknown" && isMediaMime(mimeOf(hints.contentType)))) {
          return fromMediaPeek(url, peek, hints)
        }
        if (peek.kind === "playlist") {
          const entries = playlistEntries(decodeText(peek), peek.url)
          if (entries.length > 1) return yield* refuse("LINK_IS_A_LIST", "The link is a playlist with several entries.")
          if (entries.length === 1) {
            const entry = yield* peekAs("The playlist's entry", entries[0]!, ACCEPT_MEDIA)
            if (entry.kind === "media") return fromMediaPeek(entries[0]!, entry, hints)
          }
        }
        return undefined
      })

      const episodeFromItem = Effect.fnUntraced(function*(item: FeedItem) {
        const enclosure = item.enclosure!
        const media = yield* confirmMedia(enclosure.url, {
          title: item.title,
          contentType: enclosure.type,
          sizeBytes: enclosure.length
        })
        if (media === undefined) {
          return yield* refuse("UNSUPPORTED_HOST", "The episode's enclosure does not lead to audio or video.")
        }
        return media
      })

      const readFeed = Effect.fnUntraced(function*(peek: PeekResult) {
        const feed = parseFeed(decodeText(peek), peek.url)
        if (feed === undefined) return yield* refuse("UNSUPPORTED_HOST", "The feed could not be read as RSS or Atom.")
        return feed
      })

      const latestOf = Effect.fnUntraced(function*(feed: Feed) {
        const item = latestEpisode(feed)
        if (item === undefined) return yield* refuse("EPISODE_UNKNOWN", "The show's feed lists no episode with audio or video.")
        return yield* episodeFromItem(item)
      })

      /** The feed item a page is about: by URL (link or guid), then exact title, then the longest title the page title contains. */
      const matchItem = (feed: Feed, urls: ReadonlyArray<string>, titles: ReadonlyArray<string>): FeedItem | undefined => {
        const items = feed.items.filter((item) => item.enclosure !== undefined)
        const byUrl = items.find((item) =>
          [item.link, item.guid].some((value) => {
            const comparable = comparableUrl(value)
            return comparable !== undefined && urls.includes(comparable)
          })
        )
        if (byUrl !== undefined) return byUrl
        const byTitle = items.find((item) => {
          const title = comparableTitle(item.title)
          return title !== undefined && titles.includes(title)
        })
        if (byTitle !== undefined) return byTitle
        let best: FeedItem | undefined
        let bestLength = 0
        for (const item of items) {
          const title = comparableTitle(item.title)
          if (title === undefined || title.length < 8 || title.length <= bestLength) continue
          if (titles.some((page) => ` ${page} `.includes(` ${title} `))) {
            best = item
            bestLength = title.length
          }
        }
        return best
      }

      const fromPage = Effect.fnUntraced(function*(requested: string, peek: PeekResult) {
        const info: PageInfo = scanHtml(decodeText(peek), peek.url)
        const redirected = comparableUrl(peek.url) !== comparableUrl(requested)
        if (redirected && SIGN_IN_PATH.test(new URL(peek.url).pathname)) {
          return yield* refuse("UNSUPPORTED_HOST", "The link leads to a sign-in page; only public links can be transcribed.")
        }
        const episodes = info.jsonLd.filter(hasTypeIn(EPISODE_TYPES))
        const lists = info.jsonLd.filter(hasTypeIn(LIST_TYPES))
        const series = info.jsonLd.filter(hasTypeIn(SERIES_TYPES))
        if (lists.length > 0 && episodes.length === 0) {
          return yield* refuse("LINK_IS_A_LIST", "The link is a profile, playlist or set; submit one episode's link.")
        }
        const ogTitle = metaValue(info, ["og:title", "twitter:title"])
        const title = episodes.map((node) => asString(node["name"]) ?? asString(node["headline"])).find((t) => t !== undefined) ??
          ogTitle ?? info.title

        const candidates: Array<string> = []
        const addCandidate = (value: string | undefined) => {
          const url = resolveAgainst(value, peek.url)
          if (url !== undefined && !candidates.includes(url)) candidates.push(url)
        }
        for (const node of episodes) jsonLdMediaUrls(node).forEach(addCandidate)
        addCandidate(metaValue(info, ["og:audio:secure_url", "og:audio:url", "og:audio"]))
        addCandidate(metaValue(info, ["twitter:player:stream"]))
        addCandidate(metaValue(info, ["og:video:secure_url", "og:video:url", "og:video"]))
        // Several players on one page usually mean a show page listing episodes: not one episode.
        if (info.tagMedia.length === 1) addCandidate(info.tagMedia[0])

        let firstRefusal: LinkRefused | undefined
        for (const candidate of candidates.slice(0, MAX_CANDIDATES)) {
          const outcome = yield* Effect.result(confirmMedia(candidate, { title }))
          if (Result.isSuccess(outcome)) {
            if (outcome.success !== undefined) return outcome.success
          } else {
            if (outcome.failure.code === "LINK_IS_A_LIST") return yield* outcome.failure
            firstRefusal ??= outcome.failure
          }
        }

        const feedUrls = [
          ...info.feeds.map((feed) => feed.url),
          ...series.map((node) => resolveAgainst(asString(node["webFeed"]), peek.url)).filter((u) => u !== undefined)
        ]
        if (feedUrls.length > 0) {
          // The page itself exists; a vanished feed only means the episode cannot be identified through it.
          const feedPeek = yield* peekAs("The show's feed", feedUrls[0]!, ACCEPT_ANY).pipe(
            Effect.mapError((refusal) =>
              refusal.code === "SOURCE_GONE"
                ? refuse("EPISODE_UNKNOWN", "The page's podcast feed no longer exists, so the episode cannot be identified.")
                : refusal
            )
          )
          const feed = yield* readFeed(feedPeek)
          const pageUrls = [requested, peek.url, metaValue(info, ["og:url"]), info.canonical]
            .map(comparableUrl)
            .filter((u) => u !== undefined)
          const pageTitles = [ogTitle, title, info.title].map(comparableTitle).filter((t) => t !== undefined)
          const item = matchItem(feed, pageUrls, pageTitles)
          if (item !== undefined) return yield* episodeFromItem(item)
          const feedLink = comparableUrl(feed.link)
          const isShowPage = (series.length > 0 && episodes.length === 0) ||
            (feedLink !== undefined && pageUrls.includes(feedLink)) ||
            new URL(peek.url).pathname.replace(/\/+$/, "") === ""
          if (isShowPage) return yield* latestOf(feed)
          return yield* refuse(
            "EPISODE_UNKNOWN",
            "The page links a podcast feed, but none of its episodes matches this page."
          )
        }
        if (firstRefusal !== undefined) return yield* firstRefusal
        if (info.hasPasswordField) {
          return yield* refuse("UNSUPPORTED_HOST", "The link leads to a sign-in page; only public links can be transcribed.")
        }
        return yield* refuse("EPISODE_UNKNOWN", "No episode audio or video could be identified on this page.")
      })

      const resolve = Effect.fn("LinkResolver.resolve")(function*(input: string) {
        const raw = input.trim()
        if (raw.length < 8 || raw.length > 2000) {
          return yield* refuse("BAD_URL", "The url must be a full http or https link of 8 to 2000 characters.")
        }
        if (!/^https?:\/\//i.test(raw) || !URL.canParse(raw) || new URL(raw).hostname === "") {
          return yield* refuse("BAD_URL", "The url must be a full http or https link.")
        }
        const url = new URL(raw)
        // A single-label name ("http://a/", "http://intranet/") is not a public link; "localhost" and IP
        // literals go on to be refused as local addresses, which says more.
        const host = url.hostname.replace(/^\[|\]$/g, "")
        if (!host.includes(".") && !host.includes(":") && host.toLowerCase() !== "localhost") {
          return yield* refuse("BAD_URL", "The url must be a full link with a domain name, like https://example.com/episode.")
        }
        if (isListLink(url)) {
          return yield* refuse("LINK_IS_A_LIST", "The link is a profile, playlist or set; submit one episode's link.")
        }
        const peek = yield* peekAs("The link", url.href, ACCEPT_ANY)
        switch (peek.kind) {
          case "media":
            return fromMediaPeek(url.href, peek, {})
          case "feed":
            return yield* latestOf(yield* readFeed(peek))
          case "playlist": {
            const media = yield* confirmMedia(url.href, {})
            if (media === undefined) {
              return yield* refuse("UNSUPPORTED_HOST", "The playlist does not lead to audio or video.")
            }
            return media
          }
          case "hls":
            return yield* refuse("UNSUPPORTED_HOST", "Streamed (HLS) media is not supported; submit a link to a file or an episode page.")
          case "html":
            return yield* fromPage(url.href, peek)
          case "unknown":
            return yield* refuse("UNSUPPORTED_HOST", "The link does not lead to audio, video, an episode page or a podcast feed.")
        }
      })

      const download = Effect.fn("LinkResolver.download")(function*(resolved: ResolvedMedia, destPath: string) {
        const result = yield* fetcher.download(resolved.mediaUrl, destPath, { accept: ACCEPT_MEDIA }).pipe(
          Effect.mapError(sourceFailureFor)
        )
        const discard = Effect.promise(() => rm(destPath, { force: true }))
        if (result.bytes === 0) {
          yield* discard
          return yield* new SourceFailed({ code: "NO_AUDIO", message: "The link served an empty file.", retryable: false })
        }
        if (result.kind !== "media" && !(result.kind === "unknown" && isMediaMime(mimeOf(result.contentType)))) {
          yield* discard
          return yield* new SourceFailed({
            code: "SOURCE_UNSUPPORTED",
            message: "The link no longer serves audio or video.",
            retryable: false
          })
        }
        return {
          path: destPath,
          bytes: result.bytes,
          contentType: mimeOf(result.contentType),
          finalUrl: result.url
        } satisfies DownloadedMedia
      })

      return LinkResolver.of({ resolve, download })
    })
  )

  /** The resolver over a SafeFetcher built from `config` (caps, timeouts, allow-list, redirects). */
  static readonly layer = (config: SafeFetcherConfig = {}): Layer.Layer<LinkResolver> =>
    LinkResolver.layerNoDeps.pipe(Layer.provide(SafeFetcher.layer(config)))
}
