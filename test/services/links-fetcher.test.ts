import { assert, describe, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { mkdtemp, readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { gzipSync } from "node:zlib"
import { Effect, Layer } from "effect"
import { FetchError, SafeFetcher, type SafeFetcherConfig } from "../../services/links/SafeFetcher.ts"
import { redirect, respond, startTestServer } from "../support/linkTestServer.ts"

const media = path.resolve(import.meta.dirname, "../../../shared/media")
const mp3 = readFileSync(path.join(media, "f01_library.mp3"))

const page = `<!DOCTYPE html><html><head><title>Hello</title></head><body>${"x".repeat(5000)}</body></html>`

const withFetcher = <A, E, R>(config: SafeFetcherConfig, effect: Effect.Effect<A, E, R | SafeFetcher>) =>
  effect.pipe(Effect.provide(SafeFetcher.layer(config) as Layer.Layer<SafeFetcher>))

const fetcher = Effect.service(SafeFetcher)

/** Runs an effect that must fail with a FetchError and returns that error. */
const failure = <A, R>(effect: Effect.Effect<A, FetchError, R>) =>
  effect.pipe(
    Effect.flip,
    Effect.tap((error) => Effect.sync(() => assert.instanceOf(error, FetchError)))
  )

const tempFile = Effect.promise(() => mkdtemp(path.join(tmpdir(), "links-fetch-"))).pipe(
  Effect.map((dir) => path.join(dir, "media.bin"))
)

describe("SafeFetcher", () => {
  it.live("reads a page from an allow-listed test server", () =>
    Effect.gen(function*() {
      const server = yield* startTestServer({ "/page": respond(200, { "content-type": "text/html" }, page) })
      const result = yield* withFetcher(
        { allowList: [`127.0.0.1:${server.port}`] },
        Effect.flatMap(fetcher, (f) => f.peek(`${server.origin}/page`))
      )
      assert.strictEqual(result.kind, "html")
      assert.isTrue(result.complete)
      assert.strictEqual(Buffer.from(result.body).toString("utf8"), page)
      assert.strictEqual(server.hosts[0], `127.0.0.1:${server.port}`)
    }).pipe(Effect.scoped))

  it.live("refuses loopback, private, link-local and local names without the allow-list, before connecting", () =>
    Effect.gen(function*() {
      const server = yield* startTestServer({ "/x": respond(200, { "content-type": "text/plain" }, "secret") })
      const urls = [
        `${server.origin}/x`,
        "http://10.0.0.1/x",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/",
        "http://localhost/",
        "http://LOCALHOST./",
        "http://app.localhost/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:a9fe:a9fe]/latest/meta-data",
        "http://[fe80::1]/",
        "http://[fd00::1]/",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://224.0.0.1/",
        "http://192.168.1.1/",
        "http://172.16.5.4/"
      ]
      for (const url of urls) {
        const error = yield* failure(withFetcher({}, Effect.flatMap(fetcher, (f) => f.peek(url))))
        assert.strictEqual(error.reason, "BlockedAddress", url)
      }
      assert.deepStrictEqual(server.hits, [])
    }).pipe(Effect.scoped))

  it.live("refuses other schemes, credentials and ports not allowed", () =>
    Effect.gen(function*() {
      const cases: Array<[string, string]> = [
        ["ftp://example.com/a.mp3", "InvalidUrl"],
        ["file:///etc/passwd", "InvalidUrl"],
        ["not a url", "InvalidUrl"],
        ["http://user:pw@example.com/", "InvalidUrl"],
        ["http://example.com:8080/a.mp3", "BlockedPort"],
        ["https://example.com:22/", "BlockedPort"]
      ]
      for (const [url, reason] of cases) {
        const error = yield* failure(withFetcher({}, Effect.flatMap(fetcher, (f) => f.peek(url))))
        assert.strictEqual(error.reason, reason, url)
      }
    }))

  it.live("checks the resolved address, connects to it and sends the original Host", () =>
    Effect.gen(function*() {
      const server = yield* startTestServer({ "/x": respond(200, { "content-type": "text/html" }, page) })
      const resolveHost = (name: string) =>
        name === "media.test"
          ? Effect.succeed(["127.0.0.1"])
          : name === "evil.test"
          ? Effect.succeed(["10.1.2.3"])
          : name === "mixed.test"
          ? Effect.succeed(["93.184.216.34", "169.254.169.254"])
          : Effect.fail(new Error("ENOTFOUND"))
      const config = { allowList: [`127.0.0.1:${server.port}`], resolveHost }
      const ok = yield* withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek(`http://media.test:${server.port}/x`)))
      assert.strictEqual(ok.kind, "html")
      assert.strictEqual(server.hosts[0], `media.test:${server.port}`)

      const evil = yield* failure(withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek("http://evil.test/x"))))
      assert.strictEqual(evil.reason, "BlockedAddress")
      const mixed = yield* failure(withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek("http://mixed.test/x"))))
      assert.strictEqual(mixed.reason, "BlockedAddress")
      const missing = yield* failure(withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek("http://nowhere.test/x"))))
      assert.strictEqual(missing.reason, "DnsFailed")
      assert.strictEqual(server.hits.length, 1)
    }).pipe(Effect.scoped))

  it.live("over HTTPS, verifies the certificate against the URL's host while connecting to the pinned address", () =>
    Effect.gen(function*() {
      const tls = {
        key: readFileSync(path.resolve(import.meta.dirname, "../support/links-tls-key.pem"), "utf8"),
        cert: readFileSync(path.resolve(import.meta.dirname, "../support/links-tls-cert.pem"), "utf8")
      }
      const server = yield* startTestServer({ "/x": respond(200, { "content-type": "text/html" }, page) }, { tls })
      const config = {
        allowList: [`127.0.0.1:${server.port}`],
        extraCaCertificates: [tls.cert],
        // Both names point at the test server; the certificate is only for media.test.
        resolveHost: (name: string) => Effect.succeed(name.endsWith(".test") ? ["127.0.0.1"] : [])
      }
      const ok = yield* withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek(`https://media.test:${server.port}/x`)))
      assert.strictEqual(ok.kind, "html")
      assert.strictEqual(server.hosts[0], `media.test:${server.port}`)
      const wrongName = yield* failure(
        withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek(`https://other.test:${server.port}/x`)))
      )
      assert.strictEqual(wrongName.reason, "Unreachable")
      assert.include(wrongName.message, "certificate")
      const untrusted = yield* failure(
        withFetcher({ ...config, extraCaCertificates: [] }, Effect.flatMap(fetcher, (f) => f.peek(`https://media.test:${server.port}/x`)))
      )
      assert.strictEqual(untrusted.reason, "Unreachable")
      assert.strictEqual(server.hits.length, 1)
    }).pipe(Effect.scoped))

  it.live("follows redirects on the allowed host and re-checks every hop", () =>
    Effect.gen(function*() {
      const other = yield* startTestServer({ "/x": respond(200, { "content-type": "text/html" }, page) })
      const server = yield* startTestServer({
        "/a": redirect("/b", 301),
        "/b": redirect("/page", 307),
        "/page": respond(200, { "content-type": "text/html" }, page),
        "/to-other": redirect(`${other.origin}/x`),
        "/to-metadata": redirect("http://169.254.169.254/latest/meta-data"),
        "/to-private": redirect("http://10.0.0.7/x"),
        "/to-mapped": redirect("http://[::ffff:10.0.0.7]/x"),
        "/to-ftp": redirect("ftp://example.com/x"),
        "/loop": redirect("/loop")
      })
      const config = { allowList: [`127.0.0.1:${server.port}`] }
      const run = (p: string) => withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek(`${server.origin}${p}`)))

      const ok = yield* run("/a")
      assert.strictEqual(ok.url, `${server.origin}/page`)
      assert.strictEqual(ok.kind, "html")

      for (const p of ["/to-other", "/to-metadata", "/to-private", "/to-mapped"]) {
        const error = yield* failure(run(p))
        assert.strictEqual(error.reason, "BlockedAddress", p)
      }
      assert.deepStrictEqual(other.hits, [])
      assert.strictEqual((yield* failure(run("/to-ftp"))).reason, "InvalidUrl")
      const loop = yield* failure(run("/loop"))
      assert.strictEqual(loop.reason, "TooManyRedirects")
      // One request for the first hop and five for the redirects allowed by default.
      assert.strictEqual(server.hits.filter((hit) => hit === "/loop").length, 6)
    }).pipe(Effect.scoped))

  it.live("reports HTTP status codes with Retry-After", () =>
    Effect.gen(function*() {
      const server = yield* startTestServer({
        "/busy": respond(429, { "retry-after": "17" }, "slow down"),
        "/gone": respond(410, {}, "gone")
      })
      const config = { allowList: [`127.0.0.1:${server.port}`] }
      const busy = yield* failure(withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek(`${server.origin}/busy`))))
      assert.strictEqual(busy.reason, "HttpStatus")
      assert.strictEqual(busy.status, 429)
      assert.strictEqual(busy.retryAfterSeconds, 17)
      const missing = yield* failure(withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek(`${server.origin}/nope`))))
      assert.strictEqual(missing.status, 404)
      const gone = yield* failure(withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek(`${server.origin}/gone`))))
      assert.strictEqual(gone.status, 410)
    }).pipe(Effect.scoped))

  it.live("sniffs content regardless of the declared type", () =>
    Effect.gen(function*() {
      const server = yield* startTestServer({
        "/page.bin": respond(200, { "content-type": "application/octet-stream" }, page),
        "/audio.txt": respond(200, { "content-type": "text/plain" }, mp3),
        "/feed": respond(
          200,
          { "content-type": "text/xml" },
          `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title></channel></rss>`
        ),
        "/page.gz": respond(200, { "content-type": "text/html", "content-encoding": "gzip" }, gzipSync(page))
      })
      const config = { allowList: [`127.0.0.1:${server.port}`] }
      const run = (p: string) => withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek(`${server.origin}${p}`)))
      const html = yield* run("/page.bin")
      assert.strictEqual(html.kind, "html")
      const audio = yield* run("/audio.txt")
      assert.strictEqual(audio.kind, "media")
      assert.isFalse(audio.complete)
      assert.isAtMost(audio.body.length, 4096)
      assert.strictEqual(audio.contentLength, mp3.length)
      assert.strictEqual((yield* run("/feed")).kind, "feed")
      const unzipped = yield* run("/page.gz")
      assert.strictEqual(Buffer.from(unzipped.body).toString("utf8"), page)
    }).pipe(Effect.scoped))

  it.live("downloads media to a file", () =>
    Effect.gen(function*() {
      const server = yield* startTestServer({ "/a.mp3": respond(200, { "content-type": "audio/mpeg" }, mp3) })
      const dest = yield* tempFile
      const result = yield* withFetcher(
        { allowList: [`127.0.0.1:${server.port}`] },
        Effect.flatMap(fetcher, (f) => f.download(`${server.origin}/a.mp3`, dest))
      )
      assert.strictEqual(result.bytes, mp3.length)
      assert.strictEqual(result.kind, "media")
      assert.isTrue(Buffer.compare(yield* Effect.promise(() => readFile(dest)), mp3) === 0)
    }).pipe(Effect.scoped))

  it.live("aborts a body that grows past the cap, early, and removes the partial file", () =>
    Effect.gen(function*() {
      let sent = 0
      const server = yield* startTestServer({
        // An endless body without Content-Length, 16 KiB every 5 ms.
        "/endless": (_req, res) => {
          res.writeHead(200, { "content-type": "audio/mpeg" })
          const chunk = Buffer.alloc(16 * 1024, 0xff)
          const timer = setInterval(() => {
            sent += chunk.length
            res.write(chunk)
          }, 5)
          res.on("close", () => clearInterval(timer))
        },
        "/declared": (_req, res) => {
          res.writeHead(200, { "content-type": "audio/mpeg", "content-length": String(10 * 1024 * 1024) })
          res.write(Buffer.alloc(1024))
        },
        "/big-page": respond(200, { "content-type": "text/html" }, page.repeat(4))
      })
      const config = { allowList: [`127.0.0.1:${server.port}`], mediaMaxBytes: 256 * 1024 }
      const dest = yield* tempFile
      const started = Date.now()
      const error = yield* failure(
        withFetcher(config, Effect.flatMap(fetcher, (f) => f.download(`${server.origin}/endless`, dest)))
      )
      assert.strictEqual(error.reason, "TooLarge")
      yield* Effect.promise(() => server.connectionClosed(1))
      assert.isBelow(Date.now() - started, 3000)
      assert.isBelow(sent, 1024 * 1024)
      assert.isFalse(existsSync(dest))

      const declared = yield* failure(
        withFetcher(config, Effect.flatMap(fetcher, (f) => f.download(`${server.origin}/declared`, dest)))
      )
      assert.strictEqual(declared.reason, "TooLarge")
      assert.isFalse(existsSync(dest))

      const pageCap = yield* failure(
        withFetcher(
          { allowList: [`127.0.0.1:${server.port}`], pageMaxBytes: 8000 },
          Effect.flatMap(fetcher, (f) => f.peek(`${server.origin}/big-page`))
        )
      )
      assert.strictEqual(pageCap.reason, "TooLarge")
    }).pipe(Effect.scoped), 20_000)

  it.live("times out a server that never answers and one that stalls mid-body", () =>
    Effect.gen(function*() {
      const server = yield* startTestServer({
        "/silent": () => undefined,
        "/stall": (_req, res) => {
          res.writeHead(200, { "content-type": "text/html" })
          res.write("<!DOCTYPE html><html>")
        }
      })
      const config = {
        allowList: [`127.0.0.1:${server.port}`],
        connectTimeoutMs: 300,
        readTimeoutMs: 300,
        pageTimeoutMs: 5000
      }
      const started = Date.now()
      const silent = yield* failure(withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek(`${server.origin}/silent`))))
      assert.strictEqual(silent.reason, "Timeout")
      const stall = yield* failure(withFetcher(config, Effect.flatMap(fetcher, (f) => f.peek(`${server.origin}/stall`))))
      assert.strictEqual(stall.reason, "Timeout")
      assert.isBelow(Date.now() - started, 3000)
    }).pipe(Effect.scoped))
})
