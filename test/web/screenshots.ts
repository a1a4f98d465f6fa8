/**
 * `npm run screenshots`: PNGs of the website's main pages from the same Chromium the browser
 * tests drive, into docs/screenshots/ (desktop 1280 px wide, and phone 360 px as `*-360.png`).
 * A fresh service on a throwaway data dir with the real pipeline (whisper-tiny.en and the voice
 * encoder from the models folder, so the transcript page shows speakers and per-word times): the
 * owner signs up, adds two recordings, names the dialogue's speakers, asks it a question, creates
 * a key. Pages about one recording (transcript, clips) and search are in `recordingShots`.
 */
import { mkdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import type { Page } from "playwright-core"
import { startServer } from "../support/server.ts"
import { mediaDir } from "../support/paths.ts"
import { browserSkipReason, launchBrowser, openPage, signUpThroughForm } from "./support.ts"

const outDir = path.resolve(import.meta.dirname, "../../docs/screenshots")

interface Shot {
  readonly name: string
  readonly hash: string
  /** Waits for the page's content once it is open. */
  readonly ready: (page: Page) => Promise<unknown>
}

const shots: ReadonlyArray<Shot> = [
  { name: "library", hash: "#/library", ready: (page) => page.locator("li.job .status-done").first().waitFor() },
  { name: "keys", hash: "#/keys", ready: (page) => page.locator("table.keys tbody tr").first().waitFor() },
  { name: "balance", hash: "#/balance", ready: (page) => page.getByTestId("minutes-left").waitFor() },
  { name: "admin", hash: "#/admin", ready: (page) => page.locator("li.account").first().waitFor() }
]

const reason = browserSkipReason()
if (reason !== undefined) {
  console.error(`screenshots: ${reason}`)
  process.exit(1)
}
mkdirSync(outDir, { recursive: true })
const server = await startServer("screenshots", { workers: 1 })
const browser = await launchBrowser()
try {
  const { page, context } = await openPage(browser)
  await signUpThroughForm(page, server.url, "owner@example.com")
  await page.getByTestId("file-input").setInputFiles(["a01_slt_budget.wav", "a05_dialogue_slt_kal.wav"].map((name) => ({
    name,
    mimeType: "audio/wav",
    buffer: readFileSync(path.join(mediaDir, name))
  })))
  await page.locator("li.job .status-done").nth(1).waitFor({ timeout: 180_000 })
  const dialogue = (await page.locator("li.job", { hasText: "a05_dialogue_slt_kal.wav" }).getAttribute("data-job-id"))!
  await page.goto(`${server.url}/#/jobs/${dialogue}`)
  await page.getByLabel("SPEAKER_00").fill("Ana")
  await page.getByRole("button", { name: "Save names" }).click()
  await page.getByText("Names saved.").waitFor()
  await page.getByLabel("Your question about this recording").fill("When is the meeting with the legal team?")
  await page.getByRole("button", { name: "Ask", exact: true }).click()
  await page.locator(".exchange .moments li").first().waitFor({ timeout: 60_000 })
  await page.locator(".insights h3").first().waitFor({ timeout: 120_000 })
  const recordingShots: ReadonlyArray<Shot> = [
    {
      name: "transcript",
      hash: `#/jobs/${dialogue}`,
      ready: async (view) => {
        await view.locator(".insights h3").first().waitFor({ timeout: 60_000 })
        await view.locator("audio.player").waitFor()
        // Mid-phrase, so the highlighted line and word show.
        await view.locator("button.word").nth(12).click()
        await view.locator("audio.player").evaluate((element) => (element as HTMLMediaElement).pause())
        await view.locator("li.line.playing button.word.spoken").waitFor()
      }
    },
    {
      name: "search",
      hash: "#/search?q=payment%20terms%20of%20the%20contract",
      ready: (view) => view.locator("li.hit mark").first().waitFor({ timeout: 30_000 })
    },
    {
      name: "clips",
      hash: `#/jobs/${dialogue}/clips`,
      ready: (view) => view.locator(".candidates li, #candidates-title ~ p.muted").first().waitFor({ timeout: 60_000 })
    }
  ]
  await page.goto(`${server.url}/#/keys`)
  await page.getByLabel("Name (optional)").fill("backup script")
  await page.getByRole("button", { name: "Create key" }).click()
  await page.getByTestId("new-key").waitFor()
  await page.getByRole("button", { name: "I stored it" }).click()
  const cookies = await context.cookies()
  for (const viewport of [{ width: 1280, height: 800 }, { width: 360, height: 740 }]) {
    const view = await openPage(browser, viewport)
    await view.context.addCookies(cookies)
    for (const shot of [...shots, ...recordingShots]) {
      await view.page.goto(`${server.url}/${shot.hash}`)
      await shot.ready(view.page)
      const file = path.join(outDir, `${shot.name}${viewport.width === 1280 ? "" : `-${viewport.width}`}.png`)
      await view.page.screenshot({ path: file, fullPage: true })
      console.log(file)
    }
    if (view.problems.length > 0) console.error(view.problems.join("\n"))
    await view.context.close()
  }
} finally {
  await browser.close()
  await server.close()
}
