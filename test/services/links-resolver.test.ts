import { assert, describe, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { mkdtemp, readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { LinkRefused, SourceFailed } from "../../services/links/LinkErrors.ts"
import { LinkResolver, type ResolvedMedia } from "../../services/links/LinkResolver.ts"
import type { SafeFetcherConfig } from "../../services/links/SafeFetcher.ts"
import { redirect, respond, type Route, startTestServer, type TestServer } from "../support/linkTestServer.ts"

const media = path.resolve(import.meta.dirname, "../../../shared/media")
const mp3 = readFileSync(path.join(media, "f01_library.mp3"))
const m4a = readFileSync(path.join(media, "f02_library.m4a"))
const ogg = readFileSync(path.join(media, "f03_library.ogg"))

const html = (head: string, body = "") =>
  `<!DOCTYPE html><html><head><meta charset="utf-8">${head}</head><body>${body}</body></html>`

const rss = (origin: string) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:atom="http://www.w3.org/2005/Atom">
<channel>
  <title>The Library Show</title>
  <link>${origin}/</link>
  <atom:link href="${origin}/feed.xml" rel="self" type="application/rss+xml"/>
  <item>
    <title>Second episode</title>
    <link>${origin}/episodes/second-episode</link>
    <guid isPermaLink="false">show-2</guid>
    <pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate>
    <description><![CDATA[<p>Notes with <a href="${origin}/wrong.mp3">a link</a> and <enclosure url="${origin}/wrong.mp3"/></p>]]></description>
    <enclosure url="${origin}/media/ep2.mp3" length="${mp3.length}" type="audio/mpeg"/>
  </item>
  <item>
    <title><![CDATA[Third & latest episode]]></title>
    <link>${origin}/episodes/third</link>
    <guid>show-3</guid>
    <pubDate>Wed, 10 Jan 2024 10:00:00 GMT</pubDate>
    <enclosure url="/media/ep3.m4a" length="${m4a.length}" type="audio/x-m4a"/>
  </item>
  <item>
    <title>First episode</title>
    <link>${origin}/episodes/first</link>
    <pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
    <enclosure url="${origin}/media/ep1.ogg" length="${ogg.length}" type="audio/ogg"/>
  </item>
</channel>
</rss>`

const atom = (origin: string) => `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Atom Show</title>
  <link rel="self" href="${origin}/atom.xml"/>
  <link rel="alternate" href="${origin}/atom-show"/>
  <entry>
    <title>Older entry</title>
    <id>urn:entry:1</id>
    <updated>2024-03-01T00:00:00Z</updated>
    <link rel="alternate" href="${origin}/atom/1"/>
    <link rel="enclosure" href="${origin}/media/ep1.ogg" type="audio/ogg" length="${ogg.length}"/>
  </entry>
  <entry>
    <title>Newer entry</title>
    <id>urn:entry:2</id>
    <updated>2024-04-01T00:00:00Z</updated>
    <link rel="alternate" href="${origin}/atom/2"/>
    <link rel="enclosure" href="${origin}/media/ep2.mp3" type="audio/mpeg" length="${mp3.length}"/>
  </entry>
</feed>`

const feedLink = `<link rel="alternate" type="application/rss+xml" title="Feed" href="/feed.xml">`

const routes = (otherOrigin: string): Record<string, Route> => ({
  "/media/ep1.ogg": respond(200, { "content-type": "audio/ogg" }, ogg),
  "/media/ep2.mp3": respond(200, { "content-type": "audio/mpeg" }, mp3),
  "/media/ep3.m4a": respond(200, { "content-type": "audio/mp4" }, m4a),
  // Mislabelled on purpose: media as text/plain, a page as octet-stream.
  "/media/plain": respond(200, { "content-type": "text/plain" }, mp3),
  "/media/empty.mp3": respond(200, { "content-type": "audio/mpeg" }, ""),
  "/feed.xml": (_req, res, server) => respond(200, { "content-type": "application/rss+xml" }, rss(server.origin))(_req, res, server),
  "/atom.xml": (_req, res, server) => respond(200, { "content-type": "application/xml" }, atom(server.origin))(_req, res, server),
  "/short": redirect("/go/1"),
  "/go/1": redirect("/feed.xml", 301),
  "/episode-og": respond(
    200,
    { "content-type": "text/html; charset=utf-8" },
    html(`<title>OG episode</title><meta property="og:title" content="OG episode"><meta property="og:audio" content="/media/plain">`)
  ),
  "/episode-audio": respond(
    200,
    { "content-type": "application/octet-stream" },
    html("<title>Tag episode</title>", `<picture><source srcset="/a.webp"></picture><audio controls><source src="/media/ep3.m4a" type="audio/mp4"></audio>`)
  ),
  "/episode-jsonld": respond(
    200,
    { "content-type": "text/html" },
    html(`<title>LD</title><script type="application/ld+json">${
      JSON.stringify({
        "@context": "https://schema.org",
        "@graph": [
          { "@type": "BreadcrumbList", itemListElement: [] },
          {
            "@type": "PodcastEpisode",
            name: "JSON-LD episode",
            associatedMedia: { "@type": "MediaObject", contentUrl: "/media/ep1.ogg" }
          }
        ]
      })
    }</script>`)
  ),
  "/episodes/second-episode": respond(
    200,
    { "content-type": "text/html" },
    html(`<title>Second episode | The Library Show</title>${feedLink}`, "<p>No player here.</p>")
  ),
  "/episodes/by-title": respond(
    200,
    { "content-type": "text/html" },
    html(`<meta property="og:title" content="Third &amp; latest episode">${feedLink}`)
  ),
  "/episodes/unknown": respond(
    200,
    { "content-type": "text/html" },
    html(`<title>Some bonus content</title>${feedLink}`)
  ),
  "/article": respond(200, { "content-type": "text/html" }, html("<title>Just an article</title>", "<p>words</p>")),
  "/": respond(200, { "content-type": "text/html" }, html(`<title>The Library Show</title>${feedLink}`)),
  "/list.m3u": respond(200, { "content-type": "audio/x-mpegurl" }, "#EXTM3U\n/media/ep1.ogg\n/media/ep2.mp3\n"),
  "/single.pls": respond(200, { "content-type": "audio/x-scpls" }, "[playlist]\nFile1=/media/ep2.mp3\nNumberOfEntries=1\n"),
  "/ld-list": respond(
    200,
    { "content-type": "text/html" },
    html(`<script type="application/ld+json">{"@context":"https://schema.org","@type":"MusicPlaylist","name":"Mix"}</script>`)
  ),
  "/removed": respond(410, { "content-type": "text/html" }, "gone"),
  "/private": respond(403, { "content-type": "text/html" }, "forbidden"),
  "/members-only": redirect("/login?next=/members-only"),
  "/login": respond(200, { "content-type": "text/html" }, html("<title>Sign in</title>", `<form><input type="password"></form>`)),
  "/to-metadata": redirect("http://169.254.169.254/latest/meta-data"),
  "/to-private": redirect("http://10.0.0.1/x"),
  "/to-other": redirect(`${otherOrigin}/media/ep2.mp3`),
  "/episode-other-host": respond(
    200,
    { "content-type": "text/html" },
    html(`<meta property="og:audio" content="${otherOrigin}/media/ep2.mp3">`)
  ),
  "/busy.mp3": respond(429, { "retry-after": "30" }, ""),
  "/denied.mp3": respond(403, {}, ""),
  "/page.mp3": respond(200, { "content-type": "audio/mpeg" }, html("<title>not audio</title>"))
})

/** A resolver allowed to reach exactly this server's host:port, plus the servers. */
const setup = (config: SafeFetcherConfig = {}) =>
  Effect.gen(function*() {
    const other = yield* startTestServer({ "/media/ep2.mp3": respond(200, { "content-type": "audio/mpeg" }, mp3) })
    const server: TestServer = yield* startTestServer(routes(other.origin))
    const layer = LinkResolver.layer({ allowList: [`127.0.0.1:${server.port}`], ...config })
    const resolver = yield* Effect.provide(Effect.service(LinkResolver), layer)
    return { server, other, resolver }
  })

const refusal = <A, R>(effect: Effect.Effect<A, LinkRefused, R>) =>
  effect.pipe(Effect.flip, Effect.tap((error) => Effect.sync(() => assert.instanceOf(error, LinkRefused))))

const tempFile = Effect.promise(() => mkdtemp(path.join(tmpdir(), "links-resolve-"))).pipe(
  Effect.map((dir) => path.join(dir, "source.bin"))
)

describe("LinkResolver.resolve", () => {
  it.live("refuses what is not a full http(s) link with BAD_URL, without fetching", () =>
    Effect.gen(function*() {
      const resolver = yield* Effect.provide(Effect.service(LinkResolver), LinkResolver.layer())
      for (
        const input of [
          "not a url",
          "ftp://x",
          "ftp://example.com/episode.mp3",
          "javascript:alert(1)",
          "http://a",
          "mailto:someone@example.com",
          "example.com/episode.mp3",
          `https://example.com/${"a".repeat(2000)}`
        ]
      ) {
        const error = yield* refusal(resolver.resolve(input))
        assert.strictEqual(error.code, "BAD_URL", input)
        assert.isAbove(error.message.length, 10)
      }
    }))

  it.live("refuses profile, playlist and set links by their shape before fetching", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup()
      for (const p of ["/playlist?list=PL123", "/artist/sets/summer-mix", "/user/bob", "/channel/UC123", "/@someone", "/@someone/videos"]) {
        const error = yield* refusal(resolver.resolve(`${server.origin}${p}`))
        assert.strictEqual(error.code, "LINK_IS_A_LIST", p)
      }
      assert.deepStrictEqual(server.hits, [])
    }).pipe(Effect.scoped))

  it.live("an RSS feed means its latest episode by pubDate", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup()
      const resolved = yield* resolver.resolve(`${server.origin}/feed.xml`)
      assert.deepStrictEqual(resolved, {
        mediaUrl: `${server.origin}/media/ep3.m4a`,
        title: "Third & latest episode",
        filename: "ep3.m4a",
        contentType: "audio/mp4",
        sizeBytes: m4a.length
      })
    }).pipe(Effect.scoped))

  it.live("an Atom feed means its latest entry's enclosure", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup()
      const resolved = yield* resolver.resolve(`${server.origin}/atom.xml`)
      assert.strictEqual(resolved.mediaUrl, `${server.origin}/media/ep2.mp3`)
      assert.strictEqual(resolved.title, "Newer entry")
    }).pipe(Effect.scoped))

  it.live("follows redirects to the feed", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup()
      const resolved = yield* resolver.resolve(`${server.origin}/short`)
      assert.strictEqual(resolved.mediaUrl, `${server.origin}/media/ep3.m4a`)
      assert.includeMembers(server.hits, ["/short", "/go/1", "/feed.xml"])
    }).pipe(Effect.scoped))

  it.live("a direct media link is that media, even served as text/plain", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup()
      const direct = yield* resolver.resolve(`${server.origin}/media/ep2.mp3`)
      assert.strictEqual(direct.mediaUrl, `${server.origin}/media/ep2.mp3`)
      assert.strictEqual(direct.sizeBytes, mp3.length)
      assert.strictEqual(direct.filename, "ep2.mp3")
      const mislabelled = yield* resolver.resolve(`${server.origin}/media/plain`)
      assert.strictEqual(mislabelled.mediaUrl, `${server.origin}/media/plain`)
    }).pipe(Effect.scoped))

  it.live("an episode page via og:audio, via <audio>, via JSON-LD", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup()
      const og = yield* resolver.resolve(`${server.origin}/episode-og`)
      assert.strictEqual(og.mediaUrl, `${server.origin}/media/plain`)
      assert.strictEqual(og.title, "OG episode")
      const tag = yield* resolver.resolve(`${server.origin}/episode-audio`)
      assert.strictEqual(tag.mediaUrl, `${server.origin}/media/ep3.m4a`)
      assert.strictEqual(tag.title, "Tag episode")
      const ld = yield* resolver.resolve(`${server.origin}/episode-jsonld`)
      assert.strictEqual(ld.mediaUrl, `${server.origin}/media/ep1.ogg`)
      assert.strictEqual(ld.title, "JSON-LD episode")
    }).pipe(Effect.scoped))

  it.live("an episode page via its linked feed, matched by URL and by title", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup()
      const byUrl = yield* resolver.resolve(`${server.origin}/episodes/second-episode?utm_source=x`)
      assert.strictEqual(byUrl.mediaUrl, `${server.origin}/media/ep2.mp3`)
      assert.strictEqual(byUrl.title, "Second episode")
      const byTitle = yield* resolver.resolve(`${server.origin}/episodes/by-title`)
      assert.strictEqual(byTitle.mediaUrl, `${server.origin}/media/ep3.m4a`)
      // Never the URL hidden in the CDATA description.
      assert.notInclude(server.hits, "/wrong.mp3")
    }).pipe(Effect.scoped))

  it.live("a show page that links a feed means the latest episode", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup()
      const resolved = yield* resolver.resolve(`${server.origin}/`)
      assert.strictEqual(resolved.mediaUrl, `${server.origin}/media/ep3.m4a`)
    }).pipe(Effect.scoped))

  it.live("an episode page that cannot be identified is EPISODE_UNKNOWN", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup()
      assert.strictEqual((yield* refusal(resolver.resolve(`${server.origin}/episodes/unknown`))).code, "EPISODE_UNKNOWN")
      assert.strictEqual((yield* refusal(resolver.resolve(`${server.origin}/article`))).code, "EPISODE_UNKNOWN")
    }).pipe(Effect.scoped))

  it.live("playlists: several entries are a list, one entry is its media; JSON-LD playlists are lists", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup()
      assert.strictEqual((yield* refusal(resolver.resolve(`${server.origin}/list.m3u`))).code, "LINK_IS_A_LIST")
      assert.strictEqual((yield* refusal(resolver.resolve(`${server.origin}/ld-list`))).code, "LINK_IS_A_LIST")
      const single = yield* resolver.resolve(`${server.origin}/single.pls`)
      assert.strictEqual(single.mediaUrl, `${server.origin}/media/ep2.mp3`)
    }).pipe(Effect.scoped))

  it.live("404 and 410 are SOURCE_GONE; 403 and sign-in walls are UNSUPPORTED_HOST", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup()
      assert.strictEqual((yield* refusal(resolver.resolve(`${server.origin}/missing-episode`))).code, "SOURCE_GONE")
      assert.strictEqual((yield* refusal(resolver.resolve(`${server.origin}/removed`))).code, "SOURCE_GONE")
      assert.strictEqual((yield* refusal(resolver.resolve(`${server.origin}/private`))).code, "UNSUPPORTED_HOST")
      assert.strictEqual((yield* refusal(resolver.resolve(`${server.origin}/members-only`))).code, "UNSUPPORTED_HOST")
    }).pipe(Effect.scoped))

  it.live("refuses private and local addresses without the allow-list, before connecting", () =>
    Effect.gen(function*() {
      const { server } = yield* setup()
      const resolver = yield* Effect.provide(Effect.service(LinkResolver), LinkResolver.layer())
      for (
        const url of [
          `${server.origin}/x`,
          "http://10.0.0.1/x",
          "http://169.254.169.254/latest/meta-data",
          "http://[::1]/",
          "http://localhost/",
          "http://[::ffff:169.254.169.254]/latest/meta-data"
        ]
      ) {
        const error = yield* refusal(resolver.resolve(url))
        assert.strictEqual(error.code, "UNSUPPORTED_HOST", url)
      }
      assert.deepStrictEqual(server.hits, [])
    }).pipe(Effect.scoped))

  it.live("redirects and page links out of the allowed host are refused", () =>
    Effect.gen(function*() {
      const { server, other, resolver } = yield* setup()
      for (const p of ["/to-metadata", "/to-private", "/to-other", "/episode-other-host"]) {
        const error = yield* refusal(resolver.resolve(`${server.origin}${p}`))
        assert.strictEqual(error.code, "UNSUPPORTED_HOST", p)
      }
      // The second 127.0.0.1 server differs only by port and was never contacted.
      assert.deepStrictEqual(other.hits, [])
    }).pipe(Effect.scoped))
})

describe("LinkResolver.download", () => {
  it.live("streams resolved media to a file", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup()
      const resolved = yield* resolver.resolve(`${server.origin}/feed.xml`)
      const dest = yield* tempFile
      const downloaded = yield* resolver.download(resolved, dest)
      assert.strictEqual(downloaded.bytes, m4a.length)
      assert.strictEqual(downloaded.path, dest)
      assert.strictEqual(downloaded.contentType, "audio/mp4")
      assert.isTrue(Buffer.compare(yield* Effect.promise(() => readFile(dest)), m4a) === 0)
    }).pipe(Effect.scoped))

  it.live("maps failures to job error codes with retryable", () =>
    Effect.gen(function*() {
      const { server, resolver } = yield* setup({ mediaMaxBytes: 50_000 })
      const dest = yield* tempFile
      const failed = (p: string) =>
        resolver.download({ mediaUrl: `${server.origin}${p}` } satisfies ResolvedMedia, dest).pipe(
          Effect.flip,
          Effect.tap((error) => Effect.sync(() => assert.instanceOf(error, SourceFailed)))
        )
      const cases: Array<[string, SourceFailed["code"], boolean]> = [
        ["/busy.mp3", "SOURCE_RATE_LIMITED", true],
        ["/denied.mp3", "SOURCE_ACCESS_DENIED", false],
        ["/media/missing.mp3", "SOURCE_UNAVAILABLE", false],
        ["/media/ep2.mp3", "SOURCE_TOO_LARGE", false],
        ["/page.mp3", "SOURCE_UNSUPPORTED", false],
        ["/media/empty.mp3", "NO_AUDIO", false],
        ["/to-metadata", "SOURCE_UNAVAILABLE", false]
      ]
      for (const [p, code, retryable] of cases) {
        const error = yield* failed(p)
        assert.strictEqual(error.code, code, p)
        assert.strictEqual(error.retryable, retryable, p)
        assert.isFalse(existsSync(dest), p)
      }
      assert.strictEqual((yield* failed("/busy.mp3")).retryAfterSeconds, 30)
    }).pipe(Effect.scoped))

  it.live("a source that cannot be reached is SOURCE_UNREACHABLE and retryable", () =>
    Effect.gen(function*() {
      // A port that was just free: nothing listens there.
      const closedPort = yield* Effect.scoped(startTestServer({}).pipe(Effect.map((s) => s.port)))
      const layer = LinkResolver.layer({ allowList: [`127.0.0.1:${closedPort}`] })
      const resolver = yield* Effect.provide(Effect.service(LinkResolver), layer)
      const dest = yield* tempFile
      const error = yield* resolver.download({ mediaUrl: `http://127.0.0.1:${closedPort}/a.mp3` }, dest).pipe(Effect.flip)
      assert.strictEqual(error.code, "SOURCE_UNREACHABLE")
      assert.isTrue(error.retryable)
    }))
})
