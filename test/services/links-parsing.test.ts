import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { sniffContent } from "../../services/links/ContentSniff.ts"
import { latestEpisode, parseFeed } from "../../services/links/FeedParse.ts"
import { scanHtml } from "../../services/links/HtmlScan.ts"
import { allowEntryMatches, blockedReason, parseAllowEntry, parseIp } from "../../services/links/IpRanges.ts"
import { isListLink } from "../../services/links/ListLinks.ts"
import { playlistEntries } from "../../services/links/PlaylistParse.ts"

const media = path.resolve(import.meta.dirname, "../../../shared/media")
const head = (name: string) => readFileSync(path.join(media, name)).subarray(0, 4096)

describe("IpRanges", () => {
  it("blocks non-public addresses in every spelling", () => {
    const blocked: Record<string, string> = {
      "127.0.0.1": "loopback",
      "127.255.0.9": "loopback",
      "10.0.0.1": "private",
      "172.16.0.1": "private",
      "172.31.255.255": "private",
      "192.168.0.10": "private",
      "169.254.169.254": "link-local",
      "100.64.0.1": "carrier-grade NAT",
      "100.127.255.255": "carrier-grade NAT",
      "0.0.0.0": "unspecified",
      "224.0.0.251": "multicast",
      "255.255.255.255": "reserved",
      "::": "unspecified",
      "::1": "loopback",
      "0:0:0:0:0:0:0:1": "loopback",
      "fc00::1": "private",
      "fd12:3456::1": "private",
      "fe80::abcd": "link-local",
      "ff02::1": "multicast",
      "::ffff:127.0.0.1": "loopback",
      "::ffff:7f00:1": "loopback",
      "::ffff:a9fe:a9fe": "link-local",
      "[::ffff:10.0.0.1]": "private",
      "64:ff9b::a9fe:a9fe": "link-local",
      "2002:c0a8:0101::1": "private"
    }
    for (const [text, reason] of Object.entries(blocked)) {
      const address = parseIp(text)
      assert.isDefined(address, text)
      assert.strictEqual(blockedReason(address!), reason, text)
    }
  })

  it("lets public addresses through", () => {
    for (const text of ["93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::6810:84e5", "::ffff:8.8.8.8"]) {
      assert.isUndefined(blockedReason(parseIp(text)!), text)
    }
    assert.isUndefined(parseIp("example.com"))
    assert.isUndefined(parseIp("1.2.3"))
  })

  it("allow-list entries can be bound to a port", () => {
    const loopback = parseIp("127.0.0.1")!
    const exact = parseAllowEntry("127.0.0.1:8080")!
    assert.isTrue(allowEntryMatches(exact, { hostname: "127.0.0.1", address: loopback, port: 8080 }))
    assert.isFalse(allowEntryMatches(exact, { hostname: "127.0.0.1", address: loopback, port: 8081 }))
    const range = parseAllowEntry("10.0.0.0/8")!
    assert.isTrue(allowEntryMatches(range, { hostname: "x", address: parseIp("10.9.8.7")!, port: 80 }))
    assert.isTrue(allowEntryMatches(range, { hostname: "x", address: parseIp("::ffff:10.9.8.7")!, port: 80 }))
    assert.isFalse(allowEntryMatches(range, { hostname: "x", address: parseIp("11.0.0.1")!, port: 80 }))
    const v6 = parseAllowEntry("[::1]:9000")!
    assert.isTrue(allowEntryMatches(v6, { hostname: "::1", address: parseIp("::1")!, port: 9000 }))
    const named = parseAllowEntry("media.test")!
    assert.isTrue(allowEntryMatches(named, { hostname: "MEDIA.test", address: loopback, port: 80 }))
    assert.isUndefined(parseAllowEntry("not a host!"))
  })
})

describe("sniffContent", () => {
  it("recognises real media by signature whatever the declared type", () => {
    for (const name of ["f01_library.mp3", "f02_library.m4a", "f03_library.ogg", "f04_library.flac", "a01_slt_budget.wav", "f05_podcast_video.mp4"]) {
      assert.strictEqual(sniffContent({ bytes: head(name), contentType: "text/plain", url: "https://x.test/file" }), "media", name)
    }
  })

  it("recognises pages, feeds and playlists served with the wrong type", () => {
    const bytes = (text: string) => new TextEncoder().encode(text)
    const octet = "application/octet-stream"
    assert.strictEqual(sniffContent({ bytes: bytes("\uFEFF  <!doctype html><html>"), contentType: octet, url: "https://x.test/a.mp3" }), "html")
    assert.strictEqual(
      sniffContent({ bytes: bytes(`<?xml version="1.0"?>\n<!-- c --><rss version="2.0">`), contentType: "text/plain", url: "https://x.test/" }),
      "feed"
    )
    assert.strictEqual(
      sniffContent({ bytes: bytes(`<feed xmlns="http://www.w3.org/2005/Atom">`), contentType: "text/xml", url: "https://x.test/" }),
      "feed"
    )
    assert.strictEqual(sniffContent({ bytes: bytes("#EXTM3U\n#EXTINF:1,a\nhttp://x/a.mp3\n"), contentType: octet, url: "https://x.test/" }), "playlist")
    assert.strictEqual(sniffContent({ bytes: bytes("#EXTM3U\n#EXT-X-VERSION:3\n"), contentType: "audio/mpeg", url: "https://x.test/" }), "hls")
    assert.strictEqual(sniffContent({ bytes: bytes("[playlist]\nFile1=http://x/a.mp3"), contentType: octet, url: "https://x.test/" }), "playlist")
    assert.strictEqual(sniffContent({ bytes: bytes("just some words"), contentType: "audio/mpeg", url: "https://x.test/a.mp3" }), "unknown")
    assert.strictEqual(sniffContent({ bytes: bytes("%PDF-1.7"), contentType: "application/pdf", url: "https://x.test/a.pdf" }), "unknown")
  })
})

describe("list links", () => {
  it("tells collections from single items by their shape", () => {
    const list = [
      "https://www.youtube.com/playlist?list=PL1",
      "https://soundcloud.com/artist/sets/mix",
      "https://www.youtube.com/user/someone",
      "https://www.youtube.com/channel/UC123",
      "https://www.youtube.com/@creator",
      "https://www.youtube.com/@creator/videos"
    ]
    const single = [
      "https://www.youtube.com/watch?v=abc&list=PL1",
      "https://soundcloud.com/artist/track",
      "https://example.com/user/uploads/episode.mp3",
      "https://medium.com/@writer/some-post-123",
      "https://example.com/"
    ]
    for (const url of list) assert.isTrue(isListLink(new URL(url)), url)
    for (const url of single) assert.isFalse(isListLink(new URL(url)), url)
  })
})

describe("feeds, pages and playlists", () => {
  it("picks the newest dated item with media, else the first", () => {
    const feed = parseFeed(
      `<rss><channel><title>S</title><link>https://s.test/</link>
        <item><title>No media</title><pubDate>Fri, 01 Mar 2030 00:00:00 GMT</pubDate></item>
        <item><title>A</title><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate><enclosure url="a.mp3" type="audio/mpeg"/></item>
        <item><title>B</title><pubDate>Thu, 01 Feb 2024 00:00:00 +0000</pubDate><media:content url="https://cdn.test/b.mp4" medium="video"/></item>
      </channel></rss>`,
      "https://s.test/feed"
    )!
    assert.strictEqual(feed.title, "S")
    assert.strictEqual(feed.link, "https://s.test/")
    assert.strictEqual(latestEpisode(feed)?.title, "B")
    assert.strictEqual(latestEpisode(feed)?.enclosure?.url, "https://cdn.test/b.mp4")
    assert.strictEqual(feed.items[1]?.enclosure?.url, "https://s.test/a.mp3")
    const undated = parseFeed(
      `<rss><channel><item><title>One</title><enclosure url="https://x.test/1.mp3"/></item><item><title>Two</title><enclosure url="https://x.test/2.mp3"/></item></channel></rss>`,
      "https://x.test/"
    )!
    assert.strictEqual(latestEpisode(undated)?.title, "One")
    assert.isUndefined(parseFeed("<html><body>no</body></html>", "https://x.test/"))
  })

  it("reads page metadata but not markup inside scripts or comments", () => {
    const info = scanHtml(
      `<html><head><title>T &amp; U</title>
        <meta property="og:audio" content="/ep.mp3">
        <link rel="alternate" type="application/rss+xml" href="https://s.test/feed">
        <link rel="canonical" href="/episodes/1">
        <script>var s = '<audio src="/fake.mp3"></audio>'</script>
        <!-- <audio src="/commented.mp3"></audio> -->
        <script type="application/ld+json">[{"@type":"PodcastEpisode","name":"E"}]</script>
      </head><body><video src="real.mp4"></video><input type="password"></body></html>`,
      "https://s.test/episodes/1?x=1"
    )
    assert.strictEqual(info.title, "T & U")
    assert.deepStrictEqual(info.meta.get("og:audio"), ["/ep.mp3"])
    assert.deepStrictEqual(info.feeds.map((f) => f.url), ["https://s.test/feed"])
    assert.strictEqual(info.canonical, "https://s.test/episodes/1")
    assert.deepStrictEqual(info.tagMedia, ["https://s.test/episodes/real.mp4"])
    assert.strictEqual(info.jsonLd[0]?.["name"], "E")
    assert.isTrue(info.hasPasswordField)
  })

  it("lists playlist entries", () => {
    assert.deepStrictEqual(playlistEntries("#EXTM3U\n#EXTINF:10,A\n/a.mp3\n\nhttps://cdn.test/b.mp3\n", "https://x.test/list.m3u"), [
      "https://x.test/a.mp3",
      "https://cdn.test/b.mp3"
    ])
    assert.deepStrictEqual(playlistEntries("[playlist]\nFile1=https://x.test/s\nTitle1=S\n", "https://x.test/p.pls"), [
      "https://x.test/s"
    ])
  })
})
