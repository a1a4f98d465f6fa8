/**
 * The website (src/web), served by the service itself on the same origin: `GET /` answers
 * src/web/index.html, `GET /web/app.js` and `GET /web/app.css` the app bundled from the sources.
 *
 * The bundle is built in memory with esbuild at the first request for one of these paths and
 * kept for the life of the server (no build output on disk or in git). esbuild is loaded with a
 * dynamic import, so a runtime where it cannot load (a trimmed install, a platform without its
 * binary) still starts: the API keeps working and `/` answers 503 with a short page saying why
 * the website is missing. The same page answers when the build fails — for instance when browser
 * code imports a Node module, which the browser platform cannot resolve.
 *
 * Answers carry a strong ETag (sha-256 of the bytes) and `Cache-Control: no-cache`, so a browser
 * revalidates with a cheap 304; index.html names the assets with `?v=<hash>` so a new build is
 * fetched at once. Assets are gzipped once when the browser accepts it.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

interface Asset {
  readonly body: Uint8Array
  readonly gzip: Uint8Array
  readonly etag: string
  readonly contentType: string
}

type Bundle =
  | { readonly ok: true; readonly html: Asset; readonly js: Asset; readonly css: Asset }
  | { readonly ok: false; readonly reason: string }

/** Where the app's sources are, and how the bundler is loaded (tests replace both). */
export interface WebAssetOptions {
  readonly webDir: string
  readonly loadBundler: () => Promise<unknown>
}

const defaults: WebAssetOptions = {
  webDir: fileURLToPath(new URL("../web/", import.meta.url)),
  loadBundler: () => import("esbuild")
}

const asset = (body: Uint8Array, contentType: string): Asset => ({
  body,
  gzip: new Uint8Array(gzipSync(body)),
  etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
  contentType
})

/** esbuild's API, as far as this file uses it (the package is loaded only when the site is asked for). */
interface EsbuildApi {
  build(options: Record<string, unknown>): Promise<{ outputFiles: Array<{ path: string; contents: Uint8Array }> }>
}

const build = async ({ webDir, loadBundler }: WebAssetOptions): Promise<Bundle> => {
  let esbuild: EsbuildApi
  try {
    esbuild = (await loadBundler()) as EsbuildApi
  } catch (error) {
    return { ok: false, reason: `the bundler (esbuild) could not be loaded: ${String(error)}` }
  }
  try {
    const result = await esbuild.build({
      entryPoints: { app: join(webDir, "main.tsx"), "app-style": join(webDir, "styles.css") },
      bundle: true,
      write: false,
      minify: true,
      // A classic script, not a module: same-origin module scripts are fetched in CORS mode,
      // and the service refuses requests that carry `Origin` outside the website's own calls.
      format: "iife",
      target: "es2022",
      platform: "browser",
      jsx: "automatic",
      jsxImportSource: "preact",
      outdir: "/web-out",
      define: { "process.env.NODE_ENV": "\"production\"" },
      logLevel: "silent"
    })
    const find = (suffix: string) => result.outputFiles.find((file) => file.path.endsWith(suffix))?.contents
    const js = find("app.js")
    const css = find("app-style.css")
    if (js === undefined || css === undefined) return { ok: false, reason: "the bundle has no app.js or app.css" }
    const jsAsset = asset(js, "text/javascript; charset=utf-8")
    const cssAsset = asset(css, "text/css; charset=utf-8")
    const version = (a: Asset) => a.etag.slice(1, 13)
    const template = await readFile(join(webDir, "index.html"), "utf8")
    const html = template
      .replace("/web/app.js", `/web/app.js?v=${version(jsAsset)}`)
      .replace("/web/app.css", `/web/app.css?v=${version(cssAsset)}`)
    return { ok: true, html: asset(new TextEncoder().encode(html), "text/html; charset=utf-8"), js: jsAsset, css: cssAsset }
  } catch (error) {
    return { ok: false, reason: `the website could not be built: ${error instanceof Error ? error.message : String(error)}` }
  }
}

/** The page runs only its own script and talks only to its own origin (user text is never markup). */
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
  "media-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"


const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const unavailablePage = (reason: string) =>
  HttpServerResponse.text(
    `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
      `<title>Verbatim</title><body style="font-family:system-ui;max-width:40rem;margin:2rem auto;padding:0 1rem">` +
      `<h1>Verbatim</h1><p>The website is not available in this process: ${escapeHtml(reason)}.</p>` +
      `<p>The API works as usual: see <a href="/docs">/docs</a>.</p></body></html>`,
    { status: 503, contentType: "text/html; charset=utf-8", headers: { "cache-control": "no-store" } }
  )

const serve = (getBundle: () => Promise<Bundle>, pick: (bundle: Extract<Bundle, { ok: true }>) => Asset) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const built = yield* Effect.promise(getBundle)
    if (!built.ok) return unavailablePage(built.reason)
    const chosen = pick(built)
    const headers: Record<string, string> = {
      etag: chosen.etag,
      "cache-control": "no-cache",
      vary: "accept-encoding",
      "x-content-type-options": "nosniff"
    }
    if (chosen === built.html) headers["content-security-policy"] = contentSecurityPolicy
    if (request.headers["if-none-match"] === chosen.etag) return HttpServerResponse.empty({ status: 304, headers })
    const gzip = /\bgzip\b/.test(request.headers["accept-encoding"] ?? "")
    return HttpServerResponse.uint8Array(gzip ? chosen.gzip : chosen.body, {
      contentType: chosen.contentType,
      headers: gzip ? { ...headers, "content-encoding": "gzip" } : headers
    })
  })

export const webAssetRoutes = (options: WebAssetOptions = defaults) =>
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      let bundle: Promise<Bundle> | undefined
      // One build per server, shared by concurrent first requests, kept while it runs.
      const getBundle = () => (bundle ??= build(options))
      yield* router.add("GET", "/", serve(getBundle, (b) => b.html))
      yield* router.add("GET", "/web/app.js", serve(getBundle, (b) => b.js))
      yield* router.add("GET", "/web/app.css", serve(getBundle, (b) => b.css))
    })
  )

export const WebAssetRoutes = webAssetRoutes()
