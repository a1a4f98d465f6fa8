/**
 * The recording pages in a real Chromium against the real service and pipeline (whisper-tiny.en,
 * diarization, WASM ffmpeg for the clip), one server and one short file for the whole file:
 * upload → done → transcript; playing and click-to-seek move the media element's currentTime and
 * highlight the spoken line and word; a speaker renamed on the page is in the SRT download; a
 * corrected line is in the VTT download; ask this recording → moments with times that seek; a
 * library search hit opens the transcript playing from its moment; a clip renders and its video
 * plays; the page shows progress until a job is done and plays video in a <video>; a locked job
 * shows its preview and the pay link. No console errors throughout. (A recording through
 * Chromium's fake microphone → `source: recording` is library.test.ts's.)
 */
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mediaDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { browserSkipReason, launchBrowser, openPage, signUpThroughForm, type WatchedPage } from "./support.ts"

const skip = browserSkipReason()
const file = "a01_slt_budget.wav"
const question = "What will they decide about hiring?"
const written = "They will decide on the new hiring plan for the support team [1]."

/**
 * An OpenAI-compatible endpoint standing in for the operator's LLM: it answers the chat question
 * with a sentence citing moment 1 and answers anything else with text that is not the JSON asked
 * for (the insights then stay extractive, as with a model that does not follow the format).
 */
const startLlm = async () => {
  const llm = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const asked = Buffer.concat(chunks).toString("utf8").includes(question)
      const content = asked ? JSON.stringify({ answer: written }) : "I would rather not."
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({
        id: "chatcmpl-web",
        object: "chat.completion",
        choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content } }]
      }))
    })
  })
  await new Promise<void>((resolve) => llm.listen(0, "127.0.0.1", resolve))
  return llm
}

const mediaTime = (page: Page, selector: string) =>
  page.locator(selector).evaluate((element) => (element as HTMLMediaElement).currentTime)

describe.skipIf(skip !== undefined)("website recording pages", () => {
  let server: TestServer
  let browser: Browser
  let owner: WatchedPage
  let jobId = ""
  let llm: http.Server

  beforeAll(async () => {
    llm = await startLlm()
    server = await startServer("web-recording", {
      workers: 1,
      llmUrl: Option.some(`http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1`),
      llmModel: "test-model"
    })
    browser = await launchBrowser()
    owner = await openPage(browser)
    await signUpThroughForm(owner.page, server.url, "owner@example.com")
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await new Promise<void>((resolve) => llm?.close(() => resolve()))
  })

  const download = async (page: Page, label: string) => {
    const [saved] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: label }).click()])
    return fs.readFileSync((await saved.path())!, "utf8")
  }

  it("uploads a file and shows its transcript once done, by speaker with times", async () => {
    const { page } = owner
    await page.getByTestId("file-input").setInputFiles(path.join(mediaDir, file))
    const row = page.locator("li.job", { hasText: file })
    await row.locator(".status-done").waitFor({ timeout: 120_000 })
    jobId = (await row.getAttribute("data-job-id"))!
    await row.getByRole("link").click()
    await page.getByRole("heading", { name: "Transcript", exact: true }).waitFor()
    await page.locator("li.line").first().waitFor({ timeout: 30_000 })
    const text = (await page.locator(".transcript").textContent())!.toLowerCase()
    expect(text).toContain("budget")
    expect(await page.locator("h3.speaker").first().textContent()).toBe("SPEAKER_00")
    expect(await page.locator("li.line button.time").first().textContent()).toMatch(/^0:0\d$/)
    expect(owner.problems).toEqual([])
  }, 180_000)

  it("plays, highlights the spoken word, and a click on a word seeks there", async () => {
    const { page } = owner
    await page.locator("audio.player").waitFor()
    await expect.poll(() => page.locator("audio.player").evaluate((element) => (element as HTMLMediaElement).readyState)).toBeGreaterThanOrEqual(1)
    const words = page.locator("button.word")
    const count = await words.count()
    expect(count).toBeGreaterThan(5)
    const target = words.nth(Math.floor(count * 0.6))
    const start = Number(await target.getAttribute("data-start"))
    expect(start).toBeGreaterThan(1)
    await target.click()
    await expect.poll(() => mediaTime(page, "audio.player")).toBeGreaterThanOrEqual(start - 0.05)
    expect(await mediaTime(page, "audio.player")).toBeLessThan(start + 2)
    // It plays on from there, the line and the word being spoken highlighted.
    await expect.poll(() => mediaTime(page, "audio.player"), { timeout: 5000 }).toBeGreaterThan(start + 0.3)
    await page.locator("li.line.playing button.word.spoken").waitFor({ timeout: 5000 })
    // A click on a line's time goes back to its start.
    await page.locator("li.line button.time").first().click()
    await expect.poll(() => mediaTime(page, "audio.player")).toBeLessThan(start)
    await page.locator("audio.player").evaluate((element) => (element as HTMLMediaElement).pause())
    expect(owner.problems).toEqual([])
  }, 60_000)

  it("renames a speaker, and the SRT download carries the name", async () => {
    const { page } = owner
    await page.getByLabel("SPEAKER_00").fill("Ana <b>Lima</b>")
    await page.getByRole("button", { name: "Save names" }).click()
    await page.getByText("Names saved.").waitFor()
    expect(await page.locator("h3.speaker").first().textContent()).toBe("Ana <b>Lima</b>")
    const srt = await download(page, "Subtitles (.srt)")
    expect(srt).toContain("Ana <b>Lima</b>:")
    expect(srt).not.toContain("SPEAKER_00")
    expect(owner.problems).toEqual([])
  }, 60_000)

  it("corrects a line, and the VTT download carries the correction", async () => {
    const { page } = owner
    await page.getByRole("button", { name: /^Edit the line at 0:00/ }).click()
    // The field takes the focus; Escape leaves it unchanged, focus back on Edit.
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe("TEXTAREA")
    await page.keyboard.press("Escape")
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toMatch(/^Edit the line at 0:00/)
    await page.keyboard.press("Enter")
    const markup = "<img src=x onerror=window.__pwned=1>"
    // The markup first and a full stop last: the line stays a sentence of its own, so search's
    // sentence-complete moments do not join it to the next phrase (the search test seeks past it).
    await page.getByLabel(/^Text of the line at 0:00/).fill(`${markup} Good morning, dear colleagues.`)
    await page.getByRole("button", { name: "Save", exact: true }).click()
    const line = page.locator("li.line", { hasText: "Good morning, dear colleagues." })
    await line.waitFor()
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toMatch(/^Edit the line at 0:00/)
    // Text stays text: shown as typed, never parsed or run.
    expect(await line.locator(".text").textContent()).toBe(`${markup} Good morning, dear colleagues.`)
    expect(await page.locator(".transcript img").count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
    const vtt = await download(page, "Web subtitles (.vtt)")
    expect(vtt).toMatch(/^WEBVTT/)
    expect(vtt).toContain("Good morning, dear colleagues.")
    expect(owner.problems).toEqual([])
  }, 60_000)

  it("asks the recording and gets moments with times that play from there, and the written answer's citation plays too", async () => {
    const { page } = owner
    await page.getByLabel("Your question about this recording").fill(question)
    await page.getByRole("button", { name: "Ask", exact: true }).click()
    const moment = page.locator(".exchange .moments li").first()
    await moment.waitFor({ timeout: 30_000 })
    expect((await moment.textContent())!.toLowerCase()).toContain("hiring")
    const time = moment.getByRole("button")
    expect(await time.textContent()).toMatch(/^\d+:\d\d$/)
    await page.locator("audio.player").evaluate((element) => {
      const media = element as HTMLMediaElement
      media.pause()
      media.currentTime = 6
    })
    await time.click()
    await expect.poll(() => mediaTime(page, "audio.player")).toBeLessThan(5)
    // The written answer, its [1] a button playing moment 1.
    expect(await page.locator(".exchange .answer").textContent()).toBe(written)
    await page.locator("audio.player").evaluate((element) => {
      const media = element as HTMLMediaElement
      media.pause()
      media.currentTime = 6
    })
    await expect.poll(() => mediaTime(page, "audio.player")).toBeGreaterThan(5)
    await page.getByRole("button", { name: /^Source 1: play from/ }).click()
    await expect.poll(() => mediaTime(page, "audio.player")).toBeLessThan(5)
    // The conversation is kept: a reload shows it again.
    await page.reload()
    await page.locator(".exchange", { hasText: question }).waitFor()
    expect(owner.problems).toEqual([])
  }, 60_000)

  it("finds a passage in the library and a hit opens the transcript playing from its moment", async () => {
    const { page } = owner
    await page.getByRole("link", { name: "Search" }).click()
    await page.getByLabel("Search all your recordings").fill("hiring plan for the support team")
    const hit = page.locator("li.hit").first()
    // The library is searchable a moment after the job finished or was corrected.
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Search", exact: true }).click()
      await page.locator(".busy").waitFor({ state: "detached" })
      return page.locator("li.hit").count()
    }, { timeout: 90_000, interval: 500 }).toBeGreaterThan(0)
    expect(await hit.locator(".name").textContent()).toBe(file)
    expect(await hit.locator("mark").count()).toBeGreaterThan(0)
    expect((await hit.locator("mark").allTextContents()).join(" ").toLowerCase()).toMatch(/hiring|plan|support|team/)
    expect(await hit.textContent()).toContain("Ana <b>Lima</b>")
    const href = (await hit.locator("a").getAttribute("href"))!
    expect(href).toMatch(new RegExp(`^#/jobs/${jobId}\\?t=`))
    const t = Number(new URLSearchParams(href.split("?")[1]).get("t"))
    expect(t).toBeGreaterThan(0.5)
    await hit.locator("a").click()
    await page.locator("audio.player").waitFor()
    await expect.poll(() => mediaTime(page, "audio.player")).toBeGreaterThanOrEqual(t - 0.05)
    expect(await mediaTime(page, "audio.player")).toBeLessThan(t + 3)
    await page.locator("audio.player").evaluate((element) => (element as HTMLMediaElement).pause())
    expect(owner.problems).toEqual([])
  }, 150_000)

  it("renders a clip with captions and its video plays", async () => {
    const { page } = owner
    await page.goto(`${server.url}/#/jobs/${jobId}/clips`)
    await page.getByRole("heading", { name: "Your clip" }).waitFor()
    await expect.poll(() => page.getByTestId("clip-end").textContent()).not.toBe("0:15.0")
    // Nudging moves the start to the next word and back.
    const before = await page.getByTestId("clip-start").textContent()
    const said = (await page.getByTestId("clip-text").textContent())!
    await page.getByRole("button", { name: "Start one word later" }).click()
    expect(await page.getByTestId("clip-start").textContent()).not.toBe(before)
    // The clip now says one word less at its start.
    expect(await page.getByTestId("clip-text").textContent()).toBe(said.replace(/^“\S+ /, "“"))
    await page.getByRole("button", { name: "Start one word earlier" }).click()
    expect(await page.getByTestId("clip-start").textContent()).toBe(before)
    await page.getByLabel("Captions").selectOption("line")
    await page.getByRole("button", { name: "Render the clip" }).click()
    const video = page.locator("video.clip-video")
    await video.waitFor({ timeout: 240_000 })
    expect(await page.getByRole("link", { name: /Download the video/ }).getAttribute("href")).toMatch(/\/v1\/clips\/.+\/video\?token=/)
    await video.evaluate((element) => (element as HTMLVideoElement).play())
    await expect.poll(() => mediaTime(page, "video.clip-video"), { timeout: 15_000 }).toBeGreaterThan(0.3)
    expect(await video.evaluate((element) => (element as HTMLVideoElement).videoHeight)).toBe(1920)
    expect(owner.problems).toEqual([])
  }, 300_000)

  it("shows progress until a video is transcribed, then plays it in a <video> usable from the keyboard", async () => {
    const { page } = owner
    await page.goto(`${server.url}/#/library`)
    // Two files on one worker: the video waits or runs for several seconds after it is listed.
    await page.getByTestId("file-input").setInputFiles(["a02_kal_weather.wav", "f05_podcast_video.mp4"].map((name) => path.join(mediaDir, name)))
    const row = page.locator("li.job", { hasText: "f05_podcast_video.mp4" })
    await row.waitFor()
    await row.getByRole("link").click()
    await page.getByRole("heading", { name: /^(Waiting to be transcribed|Transcribing)$/ }).waitFor()
    expect(await page.locator("[role=status] progress").count()).toBe(1)
    // The page follows the job by itself until the transcript is there.
    await page.getByRole("heading", { name: "Transcript", exact: true }).waitFor({ timeout: 120_000 })
    const video = page.locator("video.player-video")
    await video.waitFor()
    await expect.poll(() => video.evaluate((element) => (element as HTMLVideoElement).videoWidth)).toBeGreaterThan(0)
    expect(await page.locator("audio.player").count()).toBe(0)
    // Keyboard: a line's time takes the focus and Enter plays from it.
    await video.evaluate((element) => {
      const media = element as HTMLVideoElement
      media.currentTime = 5
    })
    await expect.poll(() => mediaTime(page, "video.player-video")).toBeGreaterThan(4)
    await page.locator("li.line button.time").first().focus()
    await page.keyboard.press("Enter")
    await expect.poll(() => mediaTime(page, "video.player-video")).toBeLessThan(2)
    await video.evaluate((element) => (element as HTMLVideoElement).pause())
    expect(owner.problems).toEqual([])
  }, 180_000)

  it("shows a locked transcript's preview and its pay link", async () => {
    await server.run(Effect.gen(function*() {
      yield* (yield* SqlClient.SqlClient)`UPDATE jobs SET locked = true WHERE id = ${jobId}`.pipe(Effect.orDie)
    }))
    const { page } = owner
    await page.goto(`${server.url}/#/jobs/${jobId}`)
    await page.getByRole("heading", { name: "This transcript is locked" }).waitFor()
    const pay = page.locator("section.locked a.button")
    expect(await pay.getAttribute("href")).toMatch(/^(https?:\/\/|#\/balance)/)
    await page.getByRole("heading", { name: "Transcript preview" }).waitFor()
    await page.locator("li.line").first().waitFor()
    expect(await page.getByRole("button", { name: "Subtitles (.srt)" }).count()).toBe(0)
    expect(owner.problems).toEqual([])
  }, 60_000)
})
