/**
 * The website's shell in a real Chromium: the page builds and loads without console errors,
 * a fresh installation offers sign-up, the first sign-up becomes the owner (Admin in the nav),
 * and a filename containing markup is shown as text, never run or parsed.
 */
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"
import { browserSkipReason, launchBrowser, openPage, signUpThroughForm } from "./support.ts"

const skip = browserSkipReason()

describe.skipIf(skip !== undefined)("website shell", () => {
  let server: TestServer
  let browser: Browser

  beforeAll(async () => {
    server = await startServer("web-shell", {}, { pipeline: makeStandIn({ delayMs: 100, steps: 1 }).layer })
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("serves the bundle with a validator, and a 304 when it is unchanged", async () => {
    const page = await server.get("/")
    expect(page.status).toBe(200)
    const html = await page.text()
    const script = /src="(\/web\/app\.js\?v=[^"]+)"/.exec(html)?.[1]
    expect(script).toBeDefined()
    const js = await server.get(script!)
    expect(js.status).toBe(200)
    expect(js.headers.get("content-type")).toContain("javascript")
    const etag = js.headers.get("etag")!
    expect((await server.get(script!, { "if-none-match": etag })).status).toBe(304)
    // The API still answers next to the website.
    expect((await server.get("/v1/me")).status).toBe(200)
  })

  it("loads without console errors, offers sign-up, and the first sign-up is the owner", async () => {
    const { page, context, problems } = await openPage(browser)
    try {
      await page.goto(`${server.url}/`)
      // Not signed in: the sign-in form, with a way to sign up.
      await page.getByRole("heading", { name: "Sign in" }).waitFor()
      await page.getByRole("link", { name: "Create an account" }).click()
      await page.getByRole("button", { name: "Create account" }).waitFor()
      expect(await page.getByTestId("signup-note").textContent()).toContain("first account becomes its owner")
      await signUpThroughForm(page, server.url, "owner@example.com")
      await page.getByRole("link", { name: "Admin" }).waitFor()
      await page.getByRole("heading", { name: "Recordings", exact: true }).waitFor()
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("shows a filename containing <script> as text", async () => {
    const { page, context, problems } = await openPage(browser, { width: 360, height: 800 })
    try {
      await page.goto(`${server.url}/#/signin`)
      await page.getByLabel("Email").fill("owner@example.com")
      await page.getByLabel("Password").fill("correct horse battery")
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.getByRole("heading", { name: "Recordings", exact: true }).waitFor()
      let alerted = false
      page.on("dialog", (dialog) => {
        alerted = true
        void dialog.dismiss()
      })
      // No double quote in it: browsers send one in a multipart filename as %22.
      const name = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>.wav"
      await page.getByTestId("file-input").setInputFiles({ name, mimeType: "audio/wav", buffer: Buffer.from(tinyWav()) })
      const row = page.locator("li.job .name", { hasText: "<script>" })
      await row.waitFor()
      expect(await row.textContent()).toBe(name)
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
      expect(await page.locator("li.job script, li.job img").count()).toBe(0)
      expect(alerted).toBe(false)
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  })
})
