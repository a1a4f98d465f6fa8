/**
 * Browser tests' helpers: Debian's Chromium driven by playwright-core, against the real service
 * (test/support/server.ts) on a fresh data dir. Without a Chromium the tests skip with a printed
 * reason — except under CI=true, where a missing browser fails the run (.ci/run installs it).
 */
import { existsSync } from "node:fs"
import { chromium, type Browser, type BrowserContext, type ConsoleMessage, type Page } from "playwright-core"

const candidates = [process.env["VERBATIM_TEST_CHROMIUM"], "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]

export const chromiumPath: string | undefined = candidates.find((path): path is string => path !== undefined && existsSync(path))

/** Why browser tests cannot run here, or undefined when they can. Throws in CI instead of skipping. */
export const browserSkipReason = (): string | undefined => {
  if (chromiumPath !== undefined) return undefined
  const reason = `no Chromium found (looked at ${candidates.filter((c) => c !== undefined).join(", ")}); ` +
    "install it with `apt-get install chromium` or set VERBATIM_TEST_CHROMIUM"
  if (process.env["CI"] === "true") throw new Error(`Browser tests must run in CI: ${reason}`)
  console.warn(`[test/web] skipped: ${reason}`)
  return reason
}

/** The flags every launch uses: headless, no sandbox (root in CI), nothing phoning out. */
export const chromiumArgs = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  // A fake microphone, so recording works without hardware or a permission prompt.
  "--use-fake-ui-for-media-stream",
  "--use-fake-device-for-media-stream"
]

export const launchBrowser = (): Promise<Browser> => {
  if (chromiumPath === undefined) throw new Error("no Chromium: call browserSkipReason() first")
  return chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true })
}

export interface WatchedPage {
  readonly page: Page
  readonly context: BrowserContext
  /** Console errors, uncaught page errors and failed requests seen so far. */
  readonly problems: Array<string>
}

/** A fresh context (no cookies) and page that records every console error and page error. */
export const openPage = async (browser: Browser, viewport = { width: 1280, height: 900 }): Promise<WatchedPage> => {
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  const problems: Array<string> = []
  page.on("console", (message: ConsoleMessage) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`)
  })
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`))
  return { page, context, problems }
}

/** Signs up through the form (the first sign-up of a fresh data dir becomes the owner). */
export const signUpThroughForm = async (page: Page, baseUrl: string, email: string, password = "correct horse battery") => {
  await page.goto(`${baseUrl}/#/signup`)
  await page.getByLabel("Email").fill(email)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Create account" }).click()
  await page.getByRole("navigation", { name: "Main" }).waitFor()
}
