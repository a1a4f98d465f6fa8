/**
 * HTTP(S) GET for links that users submit, safe to run on a server.
 *
 * Contract:
 * - Only http/https URLs without credentials, on ports 80/443 (or ports the layer allows).
 * - Every hop (the first request and each redirect) is resolved through DNS, every resolved address is
 *   checked against the blocked ranges (loopback, private, link-local incl. cloud metadata, CGNAT,
 *   unspecified, multicast, reserved, and their IPv4-mapped IPv6 forms) and the request connects to the
 *   checked address itself with Host / TLS servername set to the URL's host, so a DNS answer that changes
 *   between check and connect (rebinding) cannot redirect the connection.
 * - Redirects are followed by hand, up to `maxRedirects`, each target checked like the first.
 * - Bodies are capped (media and pages separately): a declared Content-Length over the cap is refused
 *   before reading, a body that grows past it is cut off at once.
 * - Time is capped: connecting until response headers (`connectTimeoutMs`), silence while reading
 *   (`readTimeoutMs`) and the whole operation (`pageTimeoutMs` / `mediaTimeoutMs`).
 * - The allow-list names hosts or ranges (optionally host:port) that may be reached although private;
 *   it exists for tests and for operators who serve media from their own network.
 */
import { createWriteStream } from "node:fs"
import { rm } from "node:fs/promises"
import { lookup } from "node:dns/promises"
import * as http from "node:http"
import * as https from "node:https"
import { isIP } from "node:net"
import { rootCertificates } from "node:tls"
import type { Readable } from "node:stream"
import { once } from "node:events"
import * as zlib from "node:zlib"
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import { type ContentKind, SNIFF_WINDOW, sniffContent } from "./ContentSniff.ts"
import {
  type AllowEntry,
  allowEntryMatches,
  blockedReason,
  familyOf,
  isLocalHostName,
  type IpAddress,
  parseAllowEntry,
  parseIp
} from "./IpRanges.ts"

/**
 * Why a fetch did not produce a usable response.
 * - InvalidUrl: not an http(s) URL, has credentials, or a redirect Location is unusable
 * - BlockedAddress: the host is, or resolves to, an address a server must not reach
 * - BlockedPort: a port other than the allowed ones
 * - DnsFailed: the host name does not resolve
 * - Unreachable: connection refused/reset, TLS failure, network error
 * - Timeout: a connect, read or overall time limit was hit
 * - TooLarge: the body is (or declares to be) larger than the cap
 * - TooManyRedirects: more redirects than allowed
 * - HttpStatus: the final response is not 2xx (see `status`, `retryAfterSeconds`)
 * - BadResponse: malformed HTTP or undecodable content encoding
 */
export const FetchFailureReason = Schema.Literals([
  "InvalidUrl",
  "BlockedAddress",
  "BlockedPort",
  "DnsFailed",
  "Unreachable",
  "Timeout",
  "TooLarge",
  "TooManyRedirects",
  "HttpStatus",
  "BadResponse"
])
export type FetchFailureReason = typeof FetchFailureReason.Type

export class FetchError extends Schema.TaggedError<FetchError>()("FetchError", {
  reason: FetchFailureReason,
  url: Schema.String,
  message: Schema.String,
  status: Schema.optionalKey(Schema.Int),
  retryAfterSeconds: Schema.optionalKey(Schema.Finite)
}) {}

export interface SafeFetcherConfig {
  /** Cap for `download` bodies. Default 5 GB (the spec's file size limit). */
  readonly mediaMaxBytes?: number
  /** Cap for page, feed and playlist bodies read by `peek`. Default 5 MB. */
  readonly pageMaxBytes?: number
  /** From opening a connection until the response headers arrive, per hop. Default 10 s. */
  readonly connectTimeoutMs?: number
  /** Longest silence while reading a body. Default 30 s. */
  readonly readTimeoutMs?: number
  /** Whole `peek`, redirects included. Default 30 s. */
  readonly pageTimeoutMs?: number
  /** Whole `download`, redirects included. Default 3 hours. */
  readonly mediaTimeoutMs?: number
  /** Default 5. */
  readonly maxRedirects?: number
  /** Ports that any host may use. Default [80, 443]. */
  readonly allowedPorts?: ReadonlyArray<number>
  /**
   * Hosts reachable although their address is blocked: "127.0.0.1", "127.0.0.1:8080", "10.0.0.0/8",
   * "[::1]:8080", "media.test", "media.test:8080". An entry with a port also permits that port for it.
   */
  readonly allowList?: ReadonlyArray<string>
  readonly userAgent?: string
  /** PEM certificates trusted besides the system's roots (an operator's internal CA, a test CA). */
  readonly extraCaCertificates?: ReadonlyArray<string>
  /**
   * Resolves a host name to its addresses. Default: the system resolver (all A and AAAA answers).
   * Tests use it to give a name a chosen address.
   */
  readonly resolveHost?: (hostname: string) => Effect.Effect<ReadonlyArray<string>, unknown>
}

export interface FetchOptions {
  /** Overrides the layer's cap for this call (never raises it above the layer's cap). */
  readonly maxBytes?: number
  readonly accept?: string
}

/** What `peek` learned about a URL. */
export interface PeekResult {
  /** The URL that answered, after redirects. */
  readonly url: string
  readonly status: number
  /** The Content-Type header as sent. */
  readonly contentType: string | undefined
  /** Declared body size, when the server sent Content-Length and no content encoding. */
  readonly contentLength: number | undefined
  /** File name from Content-Disposition, if any. */
  readonly dispositionFilename: string | undefined
  readonly kind: ContentKind
  /** The whole body for html/feed/playlist/hls; the first bytes (at most the sniff window) otherwise. */
  readonly body: Uint8Array
  /** Whether `body` is the whole resource. */
  readonly complete: boolean
}

export interface DownloadResult {
  readonly url: string
  readonly status: number
  readonly contentType: string | undefined
  readonly bytes: number
  /** Sniffed from the first bytes written. */
  readonly kind: ContentKind
}

const DEFAULTS = {
  mediaMaxBytes: 5 * 1024 ** 3,
  pageMaxBytes: 5 * 1024 ** 2,
  connectTimeoutMs: 10_000,
  readTimeoutMs: 30_000,
  pageTimeoutMs: 30_000,
  mediaTimeoutMs: 3 * 60 * 60 * 1000,
  maxRedirects: 5,
  allowedPorts: [80, 443] as ReadonlyArray<number>,
  userAgent: "Verbatim-LinkFetcher/1.0 (+self-hosted transcription service)"
}

interface Target {
  readonly url: URL
  readonly address: IpAddress
  readonly addressText: string
  readonly port: number
}

interface Opened {
  readonly url: URL
  readonly response: http.IncomingMessage
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

const portOf = (url: URL): number => (url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port))

const hostnameOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, "")

const headerValue = (value: string | Array<string> | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value

const parseRetryAfter = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.round((at - Date.now()) / 1000))
}

const dispositionFilename = (value: string | undefined): string | undefined => {
  if (value === undefined) return undefined
  const extended = /filename\*\s*=\s*utf-8''([^;]+)/i.exec(value)
  if (extended !== null) {
    const decoded = decodeUriComponentOrUndefined(extended[1]!.trim())
    if (decoded !== undefined && decoded !== "") return decoded
  }
  const plain = /filename\s*=\s*(?:"([^"]*)"|([^;]+))/i.exec(value)
  const name = (plain?.[1] ?? plain?.[2])?.trim()
  return name === undefined || name === "" ? undefined : name
}

const decodeUriComponentOrUndefined = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** Node network error codes mapped to a reason and a readable sentence. */
const describeNetworkError = (url: string, cause: unknown): FetchError => {
  const code = (cause as { code?: unknown } | undefined)?.code
  const codeText = typeof code === "string" ? code : ""
  if (codeText.startsWith("HPE_")) {
    return new FetchError({ reason: "BadResponse", url, message: `The server at ${url} sent a malformed HTTP response.` })
  }
  if (/CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY/.test(codeText)) {
    return new FetchError({ reason: "Unreachable", url, message: `The TLS certificate of ${url} could not be verified.` })
  }
  const detail = codeText === "" ? String((cause as Error | undefined)?.message ?? cause) : codeText
  return new FetchError({ reason: "Unreachable", url, message: `Could not connect to ${url} (${detail}).` })
}

/** Decodes a gzip/deflate/br body; servers sometimes compress although we ask for identity. */
const decodedBody = (response: http.IncomingMessage): Readable => {
  const encoding = headerValue(response.headers["content-encoding"])?.trim().toLowerCase()
  const decoder = encoding === "gzip" || encoding === "x-gzip"
    ? zlib.createGunzip()
    : encoding === "deflate"
    ? zlib.createInflate()
    : encoding === "br"
    ? zlib.createBrotliDecompress()
    : undefined
  if (decoder === undefined) return response
  response.on("error", (error) => decoder.destroy(error))
  return response.pipe(decoder)
}

/**
 * Iterates a body, failing with Timeout when it stays silent for `idleMs` and with TooLarge as soon as
 * more than `maxBytes` arrived. The signal (aborted when the Effect is interrupted) destroys the stream.
 */
async function* guardedChunks(
  source: Readable,
  options: { readonly url: string; readonly maxBytes: number; readonly idleMs: number; readonly signal: AbortSignal }
): AsyncGenerator<Uint8Array> {
  let timer: NodeJS.Timeout | undefined
  const arm = () => {
    clearTimeout(timer)
    timer = setTimeout(() => {
      source.destroy(
        new FetchError({
          reason: "Timeout",
          url: options.url,
          message: `The server at ${options.url} stopped sending data for ${options.idleMs} ms.`
        })
      )
    }, options.idleMs)
  }
  const onAbort = () => source.destroy()
  options.signal.addEventListener("abort", onAbort, { once: true })
  let total = 0
  arm()
  try {
    for await (const chunk of source) {
      arm()
      const bytes = chunk as Uint8Array
      total += bytes.length
      if (total > options.maxBytes) {
        source.destroy()
        throw new FetchError({
          reason: "TooLarge",
          url: options.url,
          message: `The content at ${options.url} is larger than the ${options.maxBytes}-byte limit.`
        })
      }
      yield bytes
    }
  } finally {
    clearTimeout(timer)
    options.signal.removeEventListener("abort", onAbort)
    source.destroy()
  }
}

const asFetchError = (url: string) => (cause: unknown): FetchError =>
  cause instanceof FetchError ? cause : describeNetworkError(url, cause)

export class SafeFetcher extends Context.Service<SafeFetcher, {
  /**
   * Follows redirects to a 2xx answer and reads just enough to classify it: the whole body (within
   * the page cap) when it is a page, feed or playlist, only the first bytes when it is media or unknown.
   */
  peek(url: string, options?: FetchOptions): Effect.Effect<PeekResult, FetchError>
  /**
   * Streams a 2xx answer's body to `destPath` (created or truncated) within the media cap. A partial file
   * is removed when the download fails.
   */
  download(url: string, destPath: string, options?: FetchOptions): Effect.Effect<DownloadResult, FetchError>
  /** Validates a URL's syntax, scheme, port and host without fetching it (no DNS lookup). */
  checkUrl(url: string): Effect.Effect<URL, FetchError>
  /**
   * One POST under the same address rules (checked after DNS, connection pinned to the
   * checked address; redirects are not followed). Answers the status code.
   */
  post(url: string, body: string, headers: Record<string, string>): Effect.Effect<number, FetchError>
}>()("verbatim/links/SafeFetcher") {
  static readonly layer = (config: SafeFetcherConfig = {}): Layer.Layer<SafeFetcher> =>
    Layer.effect(
      SafeFetcher,
      Effect.gen(function*() {
        const settings = { ...DEFAULTS, ...config }
        const allowList: Array<AllowEntry> = []
        for (const text of config.allowList ?? []) {
          const entry = parseAllowEntry(text)
          if (entry === undefined) return yield* Effect.die(new Error(`SafeFetcher: invalid allow-list entry "${text}"`))
          allowList.push(entry)
        }
        const resolveHost = config.resolveHost ??
          ((hostname: string) =>
            Effect.tryPromise(() => lookup(hostname, { all: true, verbatim: true })).pipe(
              Effect.map((answers) => answers.map((answer) => answer.address))
            ))

        const caCertificates = config.extraCaCertificates === undefined || config.extraCaCertificates.length === 0
          ? undefined
          : [...rootCertificates, ...config.extraCaCertificates]

        const isAllowed = (hostname: string, address: IpAddress, port: number) =>
          allowList.some((entry) => allowEntryMatches(entry, { hostname, address, port }))

        const portAllowedFor = (hostname: string, port: number) =>
          settings.allowedPorts.includes(port) ||
          allowList.some((entry) =>
            entry.port === port && (entry.hostname === undefined || entry.hostname === hostname.toLowerCase())
          )

        const checkUrl = Effect.fn("SafeFetcher.checkUrl")(function*(raw: string) {
          if (!URL.canParse(raw)) {
            return yield* new FetchError({ reason: "InvalidUrl", url: raw, message: `"${raw}" is not a valid URL.` })
          }
          const url = new URL(raw)
          if (url.protocol !== "http:" && url.protocol !== "https:") {
            return yield* new FetchError({
              reason: "InvalidUrl",
              url: raw,
              message: `Only http and https links can be fetched, not ${url.protocol.replace(":", "")}.`
            })
          }
          if (url.username !== "" || url.password !== "") {
            return yield* new FetchError({
              reason: "InvalidUrl",
              url: raw,
              message: "Links carrying a user name or password are not fetched."
            })
          }
          const hostname = hostnameOf(url)
          const port = portOf(url)
          const literal = parseIp(hostname)
          const refusedName = literal === undefined && isLocalHostName(hostname)
          const literalReason = literal === undefined ? undefined : blockedReason(literal)
          const allowedByName = allowList.some((entry) =>
            entry.hostname === hostname.toLowerCase() && (entry.port === undefined || entry.port === port)
          )
          if (
            (refusedName && !allowedByName) ||
            (literal !== undefined && literalReason !== undefined && !isAllowed(hostname, literal, port))
          ) {
            return yield* new FetchError({
              reason: "BlockedAddress",
              url: raw,
              message: `${hostname} is a ${literalReason ?? "local"} address, which this service does not fetch from.`
            })
          }
          if (!portAllowedFor(hostname, port)) {
            return yield* new FetchError({
              reason: "BlockedPort",
              url: raw,
              message: `Port ${port} is not allowed; links must use port 80 or 443.`
            })
          }
          return url
        })

        /** Resolves a checked URL to the one address the connection will use. */
        const resolveTarget = Effect.fnUntraced(function*(url: URL) {
          const hostname = hostnameOf(url)
          const port = portOf(url)
          const literal = parseIp(hostname)
          const addresses = literal !== undefined
            ? [hostname]
            : yield* resolveHost(hostname).pipe(
              Effect.mapError(() =>
                new FetchError({ reason: "DnsFailed", url: url.href, message: `The host ${hostname} could not be found.` })
              )
            )
          const parsed = addresses.map((text) => ({ text, address: parseIp(text) }))
          if (parsed.length === 0 || parsed.some((entry) => entry.address === undefined)) {
            return yield* new FetchError({ reason: "DnsFailed", url: url.href, message: `The host ${hostname} could not be found.` })
          }
          // Any blocked answer refuses the host: a name that points anywhere private is not fetched at all,
          // whichever of its addresses a connection would pick.
          for (const { address } of parsed) {
            const reason = blockedReason(address!)
            if (reason !== undefined && !isAllowed(hostname, address!, port)) {
              return yield* new FetchError({
                reason: "BlockedAddress",
                url: url.href,
                message: `${hostname} points to a ${reason} address, which this service does not fetch from.`
              })
            }
          }
          const chosen = parsed[0]!
          return { url, address: chosen.address!, addressText: chosen.text, port } satisfies Target
        })

        /** One request to a pinned address; the response is destroyed when the scope closes. */
        const request = (
          target: Target,
          options: FetchOptions,
          send?: { readonly method: "POST"; readonly body: string; readonly headers: Record<string, string> }
        ): Effect.Effect<http.IncomingMessage, FetchError, Scope.Scope> =>
          Effect.acquireRelease(
            Effect.callback<http.IncomingMessage, FetchError>((resume) => {
              const { url } = target
              const hostname = hostnameOf(url)
              const transport = url.protocol === "https:" ? https : http
              const req = transport.request({
                host: target.addressText.split("%")[0]!,
                family: familyOf(target.address),
                port: target.port,
                method: send?.method ?? "GET",
                path: `${url.pathname}${url.search}`,
                agent: false,
                // TLS verifies the certificate against the URL's host, not the pinned address.
                ...(url.protocol === "https:" && isIP(hostname) === 0 ? { servername: hostname } : {}),
                ...(url.protocol === "https:" && caCertificates !== undefined ? { ca: caCertificates } : {}),
                headers: {
                  ...send?.headers,
                  host: url.host,
                  "user-agent": settings.userAgent,
                  accept: options.accept ?? "*/*",
                  "accept-encoding": "identity",
                  ...(send === undefined ? {} : { "content-length": String(Buffer.byteLength(send.body)) })
                }
              })
              const timer = setTimeout(() => {
                req.destroy()
                resume(Effect.fail(
                  new FetchError({
                    reason: "Timeout",
                    url: url.href,
                    message: `${url.host} did not answer within ${settings.connectTimeoutMs} ms.`
                  })
                ))
              }, settings.connectTimeoutMs)
              req.on("response", (response) => {
                clearTimeout(timer)
                resume(Effect.succeed(response))
              })
              req.on("error", (error) => {
                clearTimeout(timer)
                resume(Effect.fail(describeNetworkError(url.href, error)))
              })
              req.end(send?.body)
              return Effect.sync(() => {
                clearTimeout(timer)
                req.destroy()
              })
            }),
            (response) => Effect.sync(() => response.destroy()),
            { interruptible: true }
          )

        /** Follows redirects by hand, checking every hop, to the first non-redirect answer. */
        const follow = Effect.fnUntraced(function*(raw: string, options: FetchOptions) {
          let url = yield* checkUrl(raw)
          for (let hop = 0;; hop++) {
            const target = yield* resolveTarget(url)
            const response = yield* request(target, options)
            const status = response.statusCode ?? 0
            const location = headerValue(response.headers.location)
            if (!REDIRECT_STATUSES.has(status) || location === undefined) {
              if (status < 200 || status > 299) {
                const retryAfterSeconds = parseRetryAfter(headerValue(response.headers["retry-after"]))
                return yield* new FetchError({
                  reason: "HttpStatus",
                  url: url.href,
                  status,
                  ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
                  message: `${url.href} answered HTTP ${status}.`
                })
              }
              return { url, response } satisfies Opened
            }
            response.destroy()
            if (hop >= settings.maxRedirects) {
              return yield* new FetchError({
                reason: "TooManyRedirects",
                url: raw,
                message: `${raw} redirected more than ${settings.maxRedirects} times.`
              })
            }
            if (!URL.canParse(location, url)) {
              return yield* new FetchError({
                reason: "InvalidUrl",
                url: url.href,
                message: `${url.href} redirected to an invalid location.`
              })
            }
            url = yield* checkUrl(new URL(location, url).href)
          }
        })

        const declaredLength = (response: http.IncomingMessage): number | undefined => {
          if (headerValue(response.headers["content-encoding"]) !== undefined) return undefined
          const text = headerValue(response.headers["content-length"])
          return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined
        }

        const tooLarge = (url: string, maxBytes: number) =>
          new FetchError({ reason: "TooLarge", url, message: `The content at ${url} is larger than the ${maxBytes}-byte limit.` })

        const withTotalTimeout = (ms: number, url: string) => <A, R>(effect: Effect.Effect<A, FetchError, R>) =>
          Effect.timeoutOrElse(effect, {
            duration: ms,
            orElse: () =>
              Effect.fail(new FetchError({ reason: "Timeout", url, message: `Fetching ${url} took longer than ${ms} ms.` }))
          })

        const peek = Effect.fn("SafeFetcher.peek")(function*(raw: string, options: FetchOptions = {}) {
          const maxBytes = Math.min(options.maxBytes ?? settings.pageMaxBytes, settings.pageMaxBytes)
          return yield* Effect.scoped(Effect.gen(function*() {
            const { url, response } = yield* follow(raw, options)
            const href = url.href
            const contentType = headerValue(response.headers["content-type"])
            const contentLength = declaredLength(response)
            const source = decodedBody(response)
            const read = yield* Effect.tryPromise({
              try: async (signal) => {
                const chunks: Array<Uint8Array> = []
                let size = 0
                let kind: ContentKind | undefined
                // The stream is read without a cap first (media may be huge) and stopped after the sniff
                // window; only text kinds are read on, and they are held to the page cap.
                for await (
                  const chunk of guardedChunks(source, {
                    url: href,
                    maxBytes: Number.MAX_SAFE_INTEGER,
                    idleMs: settings.readTimeoutMs,
                    signal
                  })
                ) {
                  chunks.push(chunk)
                  size += chunk.length
                  if (kind === undefined && size >= SNIFF_WINDOW) {
                    kind = sniffContent({ bytes: Buffer.concat(chunks), contentType, url: href })
                    if (kind === "media" || kind === "unknown") return { kind, chunks, complete: false }
                    if (contentLength !== undefined && contentLength > maxBytes) throw tooLarge(href, maxBytes)
                  }
                  if (size > maxBytes) throw tooLarge(href, maxBytes)
                }
                return { kind, chunks, complete: true }
              },
              catch: asFetchError(href)
            })
            const body = Buffer.concat(read.chunks)
            const kind = read.kind ?? sniffContent({ bytes: body, contentType, url: href })
            return {
              url: href,
              status: response.statusCode ?? 200,
              contentType,
              contentLength: contentLength ?? (read.complete ? body.length : undefined),
              dispositionFilename: dispositionFilename(headerValue(response.headers["content-disposition"])),
              kind,
              body: read.complete ? body : body.subarray(0, SNIFF_WINDOW),
              complete: read.complete
            } satisfies PeekResult
          })).pipe(withTotalTimeout(settings.pageTimeoutMs, raw))
        })

        const download = Effect.fn("SafeFetcher.download")(
          function*(raw: string, destPath: string, options: FetchOptions = {}) {
            const maxBytes = Math.min(options.maxBytes ?? settings.mediaMaxBytes, settings.mediaMaxBytes)
            return yield* Effect.scoped(Effect.gen(function*() {
              const { url, response } = yield* follow(raw, options)
              const href = url.href
              const contentType = headerValue(response.headers["content-type"])
              const contentLength = declaredLength(response)
              if (contentLength !== undefined && contentLength > maxBytes) {
                return yield* tooLarge(href, maxBytes)
              }
              const source = decodedBody(response)
              const written = yield* Effect.tryPromise({
                try: async (signal) => {
                  const file = createWriteStream(destPath)
                  const fileFailed = new Promise<never>((_, reject) => file.once("error", reject))
                  fileFailed.catch(() => undefined)
                  const head: Array<Uint8Array> = []
                  let headSize = 0
                  let bytes = 0
                  try {
                    for await (
                      const chunk of guardedChunks(source, { url: href, maxBytes, idleMs: settings.readTimeoutMs, signal })
                    ) {
                      if (headSize < SNIFF_WINDOW) {
                        head.push(chunk)
                        headSize += chunk.length
                      }
                      bytes += chunk.length
                      if (!file.write(chunk)) await Promise.race([once(file, "drain"), fileFailed])
                    }
                    file.end()
                    await Promise.race([once(file, "finish"), fileFailed])
                  } catch (error) {
                    file.destroy()
                    await rm(destPath, { force: true })
                    throw error
                  }
                  return { bytes, head: Buffer.concat(head) }
                },
                catch: asFetchError(href)
              })
              return {
                url: href,
                status: response.statusCode ?? 200,
                contentType,
                bytes: written.bytes,
                kind: sniffContent({ bytes: written.head, contentType, url: href })
              } satisfies DownloadResult
            })).pipe(
              withTotalTimeout(settings.mediaTimeoutMs, raw),
              // The overall timeout interrupts the copy before its own cleanup can run.
              Effect.tapError(() => Effect.promise(() => rm(destPath, { force: true })))
            )
          }
        )

        const post = Effect.fn("SafeFetcher.post")(function*(raw: string, body: string, headers: Record<string, string>) {
          const url = yield* checkUrl(raw)
          const target = yield* resolveTarget(url)
          const response = yield* request(target, {}, { method: "POST", body, headers })
          return response.statusCode ?? 0
        }, Effect.scoped)

        return SafeFetcher.of({ peek, download, checkUrl, post })
      })
    )
}
