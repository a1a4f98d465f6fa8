/**
 * Keys, Balance, Admin and sessions in a real Chromium: a key created on the panel works from a
 * script (curl's request, sent with fetch) and stops with 401 once revoked; rotation shows the
 * 24-hour overlap; a pay link opened on Balance turns to paid when the owner confirms it on the
 * Admin page; an invited person signs up from the invite link as a member (no Admin); sign out
 * ends the session.
 */
import { Effect } from "effect"
import type { Browser } from "playwright-core"
import { Accounts } from "../../services/Accounts.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn } from "../support/standInPipeline.ts"
import { browserSkipReason, launchBrowser, openPage, signUpThroughForm, type WatchedPage } from "./support.ts"

const skip = browserSkipReason()

describe.skipIf(skip !== undefined)("website account pages", () => {
  let server: TestServer
  let browser: Browser
  let owner: WatchedPage

  beforeAll(async () => {
    server = await startServer("web-account", {}, { pipeline: makeStandIn({ delayMs: 100, steps: 1 }).layer })
    browser = await launchBrowser()
    owner = await openPage(browser)
    owner.page.on("dialog", (dialog) => void dialog.accept())
    await signUpThroughForm(owner.page, server.url, "owner@example.com")
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  const me = (key: string) => fetch(`${server.url}/v1/me`, { headers: { "x-api-key": key } })

  it("creates a key shown once that works from a script, rotates with the overlap shown, revokes to 401", async () => {
    const { page } = owner
    await page.getByRole("link", { name: "Keys" }).click()
    await page.getByLabel("Name (optional)").fill("<b>nightly</b>")
    await page.getByRole("button", { name: "Create key" }).click()
    const key = (await page.getByTestId("new-key").textContent())!
    expect(key).toMatch(/^vb_/)
    expect((await me(key)).status).toBe(200)
    await page.getByRole("button", { name: "I stored it" }).click()
    expect(await page.getByTestId("new-key").count()).toBe(0)
    // The name is text, not markup.
    expect(await page.locator("table.keys td", { hasText: "<b>nightly</b>" }).count()).toBe(1)

    await page.getByRole("button", { name: "Rotate <b>nightly</b>" }).click()
    const rotated = (await page.getByTestId("new-key").textContent())!
    expect(rotated).not.toBe(key)
    expect(await page.locator(".secret").textContent()).toContain("keeps working until")
    expect((await me(key)).status).toBe(200)
    expect((await me(rotated)).status).toBe(200)
    await page.getByRole("button", { name: "I stored it" }).click()
    await page.locator("table.keys .status-rotating").waitFor()

    const active = page.locator("tr", { has: page.locator(".status-active") })
    await active.getByRole("button", { name: /^Revoke/ }).click()
    await expect.poll(() => page.locator("table.keys .status-active").count()).toBe(0)
    expect((await me(rotated)).status).toBe(401)
    expect(owner.problems).toEqual([])
  })

  it("opens a pay link on Balance and shows it paid once the owner confirms it on Admin", async () => {
    const { page, context } = owner
    await page.getByRole("link", { name: "Balance" }).click()
    await page.getByTestId("minutes-left").waitFor()
    const opened = context.waitForEvent("page")
    await page.getByRole("button", { name: "Buy for $4" }).click()
    const payTab = await opened
    expect(await page.getByTestId("checkout-status").textContent()).toBe("pending")
    await payTab.waitForURL(/\/checkout\//)
    await payTab.close()
    const id = (await page.getByTestId("checkout-id").textContent())!

    const admin = await context.newPage()
    await admin.goto(`${server.url}/#/admin`)
    await admin.getByLabel("Pay link id").fill(id)
    await admin.getByRole("button", { name: "Confirm paid" }).click()
    await admin.getByText("Paid: 500 minutes credited.").waitFor()
    await admin.close()

    await expect.poll(() => page.getByTestId("checkout-status").textContent(), { timeout: 15_000 }).toBe("paid")
    // The figures reload on payment: the pack is the newest of the recent charges.
    const newest = page.getByTestId("recent-charges").locator("tbody tr").first()
    await expect.poll(() => newest.textContent(), { timeout: 15_000 }).toMatch(/Pack bought.*\+500/)
    expect(owner.problems).toEqual([])
  })

  it("lets the owner create an account, grant API access, change its plan and add credit", async () => {
    const { page } = owner
    await page.goto(`${server.url}/#/admin`)
    await page.getByLabel("Email").nth(1).fill("script@example.com")
    await page.getByRole("button", { name: "Create", exact: true }).click()
    await page.getByText("Account created.").waitFor()
    const account = page.locator("li.account", { hasText: "script@example.com" })
    expect(await account.textContent()).toContain("no API access")
    await account.getByRole("button", { name: "Grant API access" }).click()
    await expect.poll(() => account.textContent()).toContain("· API access")
    await account.getByLabel("Plan").selectOption("workspace")
    await account.getByRole("button", { name: "Save plan" }).click()
    await page.getByText("Plan changed.").waitFor()
    await account.getByLabel("Minutes").fill("120")
    await account.getByRole("button", { name: "Add credit" }).click()
    await page.getByText(/^Balance now 120 min/).waitFor()
    await expect.poll(() => account.textContent()).toContain("120 min")
    const stored = await server.run(Effect.gen(function*() {
      return yield* (yield* Accounts).resolve("script@example.com")
    }))
    expect(stored).toMatchObject({ plan: "workspace", api_access: true })
    expect(owner.problems).toEqual([])
  })

  it("invites a person who signs up from the link as a member, and signs out", async () => {
    const { page } = owner
    await page.getByRole("link", { name: "Admin" }).click()
    await page.getByLabel("Email").first().fill("guest@example.com")
    await page.getByRole("button", { name: "Invite", exact: true }).click()
    const inviteUrl = (await page.getByTestId("invite-url").textContent())!
    expect(inviteUrl).toContain("#/signup?invite=")

    const member = await openPage(browser, { width: 360, height: 740 })
    await member.page.goto(inviteUrl.replace(/^https?:\/\/[^/]+/, server.url))
    expect(await member.page.getByTestId("signup-note").textContent()).toContain("invited")
    await member.page.getByLabel("Email").fill("guest@example.com")
    await member.page.getByLabel("Password").fill("another long password")
    await member.page.getByRole("button", { name: "Create account" }).click()
    await member.page.getByRole("button", { name: "Menu" }).click()
    await member.page.getByRole("link", { name: "Library" }).waitFor()
    expect(await member.page.getByRole("link", { name: "Admin" }).count()).toBe(0)

    // A member without API access: the refusal's sentence and its pay link.
    await member.page.goto(`${server.url}/#/keys`)
    await member.page.getByRole("button", { name: "Create key" }).click()
    const refusal = member.page.getByRole("alert")
    await refusal.waitFor()
    expect(await refusal.textContent()).toMatch(/API access/i)
    expect(await refusal.getByRole("link", { name: "Open the pay link" }).getAttribute("href")).toMatch(/checkout|pricing/)

    // Sign out ends this session only; "sign out everywhere" ends the others too, and a page
    // whose session ended goes back to sign-in at its next call.
    const signIn = async () => {
      const other = await openPage(browser)
      await other.page.goto(`${server.url}/#/signin`)
      await other.page.getByLabel("Email").fill("guest@example.com")
      await other.page.getByLabel("Password").fill("another long password")
      await other.page.getByRole("button", { name: "Sign in" }).click()
      await other.page.getByRole("navigation", { name: "Main" }).waitFor()
      return other
    }
    const second = await signIn()
    await second.page.getByRole("button", { name: "Sign out", exact: true }).click()
    await second.page.getByRole("heading", { name: "Sign in" }).waitFor()
    const session = await second.page.evaluate(async () => (await fetch("/web/session")).json() as Promise<{ signed_in: boolean }>)
    expect(session.signed_in).toBe(false)
    await member.page.goto(`${server.url}/#/balance`)
    await member.page.getByTestId("minutes-left").waitFor()

    const third = await signIn()
    await third.page.getByRole("button", { name: "Sign out everywhere" }).click()
    await third.page.getByRole("heading", { name: "Sign in" }).waitFor()
    await member.page.goto(`${server.url}/#/library`)
    await member.page.getByRole("heading", { name: "Sign in" }).waitFor()
    expect(second.problems).toEqual([])
    expect(third.problems).toEqual([])
    await second.context.close()
    await third.context.close()
    // Chromium itself reports every non-2xx answer in the console; the only ones here are the
    // refusal the page showed and the call that found the session ended. The page logs nothing.
    expect(member.problems).toEqual([
      "console: Failed to load resource: the server responded with a status of 402 (Payment Required)",
      "console: Failed to load resource: the server responded with a status of 401 (Unauthorized)"
    ])
    await member.context.close()
  })
})
