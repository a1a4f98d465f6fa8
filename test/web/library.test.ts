/**
 * The Library page in a real Chromium: several files dropped at once each get a job that
 * reaches done; delete → undo brings a job back; delete → "Recently deleted" → restore; a take
 * recorded through Chromium's fake microphone becomes a job with `source: recording`.
 */
import type { Browser, Page } from "playwright-core"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WAV_HEADER_BYTES, wavHeader } from "../../pipeline/media/Wav.ts"
import { mediaDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"
import { browserSkipReason, launchBrowser, openPage, signUpThroughForm, type WatchedPage } from "./support.ts"

const skip = browserSkipReason()

const wav = (name: string) => ({ name, mimeType: "audio/wav", buffer: readFileSync(path.join(mediaDir, name)) })

const tempDirs: Array<string> = []

/** A silent 16 kHz mono PCM16 WAV of `bytes` bytes (header included), written to a temp file. */
const silentWavFile = (bytes: number, name: string) => {
  const file = Buffer.alloc(bytes)
  wavHeader({ sampleRate: 16_000, channels: 1, dataBytes: bytes - WAV_HEADER_BYTES }).copy(file)
  const dir = mkdtempSync(path.join(tmpdir(), "vb-web-"))
  tempDirs.push(dir)
  const target = path.join(dir, name)
  writeFileSync(target, file)
  return target
}

const row = (page: Page, name: string) => page.locator("li.job", { has: page.locator(".name", { hasText: name }) })

describe.skipIf(skip !== undefined)("website library", () => {
  let server: TestServer
  let browser: Browser
  let owner: WatchedPage
  const standIn = makeStandIn({ delayMs: 200, steps: 2 })

  beforeAll(async () => {
    server = await startServer("web-library", { workers: 1 }, { pipeline: standIn.layer })
    browser = await launchBrowser()
    owner = await openPage(browser)
    await signUpThroughForm(owner.page, server.url, "owner@example.com")
  })
  afterAll(async () => {
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
    await browser?.close()
    await server?.close()
  })

  it("uploads several files with a progress bar each; each job reaches done", async () => {
    const { page } = owner
    await page.getByTestId("file-input").setInputFiles([wav("a01_slt_budget.wav"), wav("a02_kal_weather.wav")])
    const uploads = page.getByRole("list", { name: "Uploads" })
    await expect.poll(() => uploads.locator("li").count()).toBe(2)
    for (const name of ["a01_slt_budget.wav", "a02_kal_weather.wav"]) {
      await row(page, name).locator(".status-done").waitFor({ timeout: 60_000 })
      expect(await row(page, name).textContent()).toContain("upload")
    }
    // The list answers the same as the API: newest first.
    const names = await page.locator("li.job .name").allTextContents()
    expect(names).toHaveLength(2)
    expect(owner.problems).toEqual([])
  })

  it("shows the running job's progress and the queued ones' places, until they are done", async () => {
    const { page } = owner
    standIn.defaults.delayMs = 4000
    standIn.defaults.steps = 8
    try {
      const names = ["slow-1.wav", "slow-2.wav", "slow-3.wav"]
      await page.getByTestId("file-input").setInputFiles(
        names.map((name) => ({ name, mimeType: "audio/wav", buffer: Buffer.from(tinyWav()) }))
      )
      await page.locator("li.job .status-processing progress").first().waitFor({ timeout: 30_000 })
      await page.locator("li.job .status-queued", { hasText: /\d+ ahead/ }).first().waitFor({ timeout: 30_000 })
      for (const name of names) await row(page, name).locator(".status-done").waitFor({ timeout: 60_000 })
    } finally {
      standIn.defaults.delayMs = 200
      standIn.defaults.steps = 2
    }
    expect(owner.problems).toEqual([])
  })

  it("takes files dropped on the drop zone, and filters the list by status", async () => {
    const { page } = owner
    // A real drop event carrying a File, as a file manager's drag would deliver it.
    const bytes = [...readFileSync(path.join(mediaDir, "a03_espeak_library.wav"))]
    const transfer = await page.evaluateHandle((content) => {
      const data = new DataTransfer()
      data.items.add(new File([new Uint8Array(content)], "dropped.wav", { type: "audio/wav" }))
      return data
    }, bytes)
    await page.dispatchEvent(".drop", "drop", { dataTransfer: transfer })
    await row(page, "dropped.wav").locator(".status-done").waitFor({ timeout: 60_000 })

    await page.getByLabel("Status").selectOption("failed")
    await page.getByText("No failed recordings.").waitFor()
    expect(await page.locator("li.job").count()).toBe(0)
    await page.getByLabel("Status").selectOption("done")
    await expect.poll(() => page.locator("li.job").count()).toBe(6)
    await page.getByLabel("Status").selectOption("all")
    expect(owner.problems).toEqual([])
  })

  it("deletes with undo, and restores from Recently deleted", async () => {
    const { page } = owner
    await page.getByRole("button", { name: "Delete a02_kal_weather.wav" }).click()
    await page.getByRole("button", { name: "Undo" }).waitFor()
    await expect.poll(() => row(page, "a02_kal_weather.wav").count()).toBe(0)
    await page.getByRole("button", { name: "Undo" }).click()
    await row(page, "a02_kal_weather.wav").locator(".status-done").waitFor()

    await page.getByRole("button", { name: "Delete a01_slt_budget.wav" }).click()
    await expect.poll(() => row(page, "a01_slt_budget.wav").count()).toBe(0)
    await page.getByRole("link", { name: "Recently deleted" }).click()
    const deleted = row(page, "a01_slt_budget.wav")
    await deleted.waitFor()
    expect(await deleted.textContent()).toContain("restorable until")
    await deleted.getByRole("button", { name: "Restore" }).click()
    await expect.poll(() => row(page, "a01_slt_budget.wav").count()).toBe(0)
    await page.getByRole("link", { name: "Recordings", exact: true }).click()
    await row(page, "a01_slt_budget.wav").locator(".status-done").waitFor()
    expect(owner.problems).toEqual([])
  })

  it("sends a file over 100 MB through the direct upload (init, PUT with progress, commit)", async () => {
    const { page } = owner
    const requests: Array<string> = []
    page.on("request", (request) => requests.push(`${request.method()} ${new URL(request.url()).pathname}`))
    await page.getByTestId("file-input").setInputFiles(silentWavFile(101_000_000, "long-silence.wav"))
    await row(page, "long-silence.wav").waitFor({ timeout: 60_000 })
    expect(requests).toContain("POST /v1/uploads/init")
    expect(requests.some((line) => /^PUT \/v1\/uploads\/[0-9a-f-]+\/bytes$/.test(line))).toBe(true)
    expect(requests.some((line) => /^POST \/v1\/uploads\/[0-9a-f-]+\/commit$/.test(line))).toBe(true)
    expect(requests).not.toContain("POST /v1/transcribe")
    expect(owner.problems).toEqual([])
  })

  it("records through the (fake) microphone into a job with source: recording", async () => {
    const { page } = owner
    await page.getByRole("button", { name: "● Record" }).click()
    await page.getByText(/^Recording \d/).waitFor()
    await page.waitForTimeout(2500)
    await page.getByRole("button", { name: "■ Stop and transcribe" }).click()
    const recorded = page.locator("li.job", { has: page.locator(".name", { hasText: /^recording-/ }) })
    await recorded.waitFor({ timeout: 30_000 })
    expect(await recorded.locator(".facts").textContent()).toContain("Sourcerecording")
    // The API agrees (the owner's session token, as the page uses it).
    const session = await page.evaluate(async () => (await fetch("/web/session")).json() as Promise<{ access_token: string }>)
    const list = await fetch(`${server.url}/v1/jobs`, { headers: { authorization: `Bearer ${session.access_token}` } })
    const body = await list.json() as { jobs: Array<{ source: string; filename: string | null }> }
    expect(body.jobs.filter((job) => job.source === "recording")).toHaveLength(1)
    expect(owner.problems).toEqual([])
  })
})
