/**
 * WebAssets without a browser: when the bundler cannot load, or the app cannot be bundled for
 * the browser (here: browser code importing a Node module), `/` answers 503 with a page saying
 * why, and the other routes of the same server keep answering.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { webAssetRoutes, type WebAssetOptions } from "../../src/http/WebAssets.ts"

const Ping = HttpRouter.use((router) => router.add("GET", "/v1/ping", Effect.succeed(HttpServerResponse.text("pong"))))

let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  close = undefined
})

const serve = async (options: WebAssetOptions) => {
  const layer = HttpRouter.serve(Layer.mergeAll(webAssetRoutes(options), Ping), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  return HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
}

const appDir = (mainSource: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), "vb-web-"))
  writeFileSync(path.join(dir, "main.tsx"), mainSource)
  writeFileSync(path.join(dir, "styles.css"), "body { margin: 0 }\n")
  writeFileSync(path.join(dir, "index.html"), `<link rel="stylesheet" href="/web/app.css"><script defer src="/web/app.js"></script>`)
  return dir
}

describe("website assets", () => {
  it("answers a page saying why when the bundler cannot load; the API keeps answering", async () => {
    const url = await serve({
      webDir: appDir("export {}\n"),
      loadBundler: () => Promise.reject(new Error("Cannot find package 'esbuild'"))
    })
    const page = await fetch(`${url}/`)
    expect(page.status).toBe(503)
    expect(page.headers.get("content-type")).toContain("text/html")
    expect(await page.text()).toContain("the bundler (esbuild) could not be loaded: Error: Cannot find package &#39;esbuild&#39;")
    expect((await fetch(`${url}/web/app.js`)).status).toBe(503)
    expect(await (await fetch(`${url}/v1/ping`)).text()).toBe("pong")
  })

  it("refuses to bundle browser code that imports a Node module", async () => {
    const url = await serve({
      webDir: appDir(`import { readFileSync } from "node:fs"\nconsole.log(readFileSync)\n`),
      loadBundler: () => import("esbuild")
    })
    const page = await fetch(`${url}/`)
    expect(page.status).toBe(503)
    expect(await page.text()).toContain("could not be built")
  })

  it("builds a small app once, with versioned asset links and gzip", async () => {
    let loads = 0
    const url = await serve({
      webDir: appDir(`const greeting: string = "hi"\nconsole.log(greeting)\n`),
      loadBundler: () => {
        loads++
        return import("esbuild")
      }
    })
    const [html, again] = await Promise.all([fetch(`${url}/`), fetch(`${url}/`)])
    expect(html.status).toBe(200)
    expect(html.headers.get("content-security-policy")).toContain("script-src 'self'")
    const body = await html.text()
    await again.text()
    expect(body).toMatch(/\/web\/app\.js\?v=[\w-]{12}/)
    expect(body).toMatch(/\/web\/app\.css\?v=[\w-]{12}/)
    const js = await fetch(`${url}/web/app.js`, { headers: { "accept-encoding": "gzip" } })
    expect(js.headers.get("content-encoding")).toBe("gzip")
    expect(await js.text()).toContain("hi")
    expect(loads).toBe(1)
  })
})
