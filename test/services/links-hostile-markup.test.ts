import { assert, describe, it } from "@effect/vitest"
import { latestEpisode, parseFeed } from "../../services/links/FeedParse.ts"
import { scanHtml } from "../../services/links/HtmlScan.ts"
import { blockedReason, parseIp } from "../../services/links/IpRanges.ts"
import { MAX_DEPTH } from "../../services/links/Markup.ts"

const PAGE_CAP = 5 * 1024 * 1024
const fill = (unit: string) => unit.repeat(Math.floor(PAGE_CAP / unit.length))

/** Wall time of `run`, in ms. A quadratic parse of these inputs takes minutes, not seconds. */
const timed = (run: () => unknown): number => {
  const started = performance.now()
  run()
  return performance.now() - started
}
const BUDGET_MS = 15_000

describe("markup from hostile servers, at the 5 MB page cap", () => {
  it("unclosed elements stop the parse at the depth bound instead of running for minutes", () => {
    assert.isBelow(timed(() => scanHtml(fill("<div>"), "https://x.test/")), BUDGET_MS)
    assert.isBelow(timed(() => parseFeed(`<rss><channel>${fill("<item><title>t</title>")}`, "https://x.test/")), BUDGET_MS)
    assert.isBelow(timed(() => scanHtml(fill("<div>") + fill("</b>"), "https://x.test/")), BUDGET_MS)
  })

  it("what precedes the depth bound still counts; what follows it does not", () => {
    const page = `<title>Kept</title><audio src="/a.mp3"></audio>${"<div>".repeat(MAX_DEPTH)}<video src="/b.mp4"></video>`
    const info = scanHtml(page, "https://x.test/")
    assert.strictEqual(info.title, "Kept")
    assert.deepStrictEqual(info.tagMedia, ["https://x.test/a.mp3"])
  })

  it("many repeated meta tags and feed items are read in linear time", () => {
    let info: ReturnType<typeof scanHtml> | undefined
    assert.isBelow(timed(() => (info = scanHtml(fill(`<meta property="og:audio" content="/a.mp3">`), "https://x.test/"))), BUDGET_MS)
    assert.isAbove(info!.meta.get("og:audio")!.length, 100_000)
    let items = 0
    const feed = fill(`<item><title>t</title><enclosure url="a.mp3" type="audio/mpeg"/></item>`)
    assert.isBelow(timed(() => (items = parseFeed(`<rss><channel>${feed}</channel></rss>`, "https://x.test/")!.items.length)), BUDGET_MS)
    assert.isAbove(items, 50_000)
  })

  it("unterminated comments, quotes and CDATA hide what follows them", () => {
    const page = scanHtml(`<title>T</title><!-- <audio src="/x.mp3"> ${"x".repeat(1000)}`, "https://x.test/")
    assert.deepStrictEqual(page.tagMedia, [])
    const quoted = scanHtml(`<a href="${"y".repeat(1000)}<audio src="/x.mp3">`, "https://x.test/")
    assert.deepStrictEqual(quoted.tagMedia, [])
    const feed = parseFeed(
      `<rss><channel><item><title>A</title><description><![CDATA[<enclosure url="/wrong.mp3"/>`,
      "https://x.test/"
    )!
    assert.isUndefined(latestEpisode(feed))
  })

  it("XML and numeric character references in feeds are decoded", () => {
    const feed = parseFeed(
      `<rss><channel><title>A &amp; B &#8212; C &#x2014; D</title><item><title>X &lt;Y&gt;</title></item></channel></rss>`,
      "https://x.test/"
    )!
    assert.strictEqual(feed.title, "A & B \u2014 C \u2014 D")
    assert.strictEqual(feed.items[0]?.title, "X <Y>")
  })
})

describe("address policy beyond the parsing suite", () => {
  it("refuses every special-purpose range, including the ones only ipaddr.js names", () => {
    const blocked = [
      "0.1.2.3", "192.0.0.8", "192.0.2.1", "198.18.0.1", "198.51.100.1", "203.0.113.1", "240.0.0.1",
      "192.52.193.1", "192.31.196.1", // AMT relay and AS112: not destinations a link should name
      "::127.0.0.1", "::7f00:1", "::0.0.0.2", "::ffff:0:127.0.0.1", "64:ff9b::127.0.0.1", "64:ff9b:1::8.8.8.8",
      "2002:7f00:1::", "2001::1", "2001:2::1", "2001:db8::1", "100::1", "fec0::1", "fe80::1%eth0", "3fff::1",
      "5f00::1", "::ffff:255.255.255.255"
    ]
    for (const text of blocked) assert.isDefined(blockedReason(parseIp(text)!), text)
    for (const text of ["::8.8.8.8", "::ffff:0:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::", "2001:4860:4860::8888"]) {
      assert.isUndefined(blockedReason(parseIp(text)!), text)
    }
  })

  it("reads only canonical dotted-quad IPv4 literals", () => {
    for (const text of ["127.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433", "1.2.3.4.5", "::ffff:1.2.3"]) {
      assert.isUndefined(parseIp(text), text)
    }
  })
})
