/**
 * Who may change what on the website's endpoints, over real sockets: every state-changing
 * `/web/` route (listed from /openapi.json, so a new one is covered too) refuses a missing or
 * wrong `X-CSRF-Token` with 403 `CSRF_FAILED`; every Admin route refuses a member with 403
 * `OWNER_ONLY`; sign-up and sign-in from another origin are refused; the same origin passes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn } from "../support/standInPipeline.ts"
import { expectCode, makeWeb, password, type WebUser } from "./support.ts"

let server: TestServer
let web: Awaited<ReturnType<typeof makeWeb>>
let owner: WebUser
let member: WebUser
let stateChanging: Array<{ method: string; path: string }>

const someId = "5b2f8a4e-1c3d-4e5f-9a6b-7c8d9e0f1a2b"

/** A body each route decodes, so that only the check under test can refuse it. */
const bodies: Record<string, unknown> = {
  "/web/keys": { name: "ci" },
  "/web/admin/accounts": { email: "made@example.com" },
  "/web/admin/accounts/{id}/plan": { plan: "workspace" },
  "/web/admin/accounts/{id}/credits": { minutes: 10 },
  "/web/admin/invites": { email: "new@example.com" }
}

beforeAll(async () => {
  server = await startServer("web-access", {}, { pipeline: makeStandIn({ delayMs: 50, steps: 1 }).layer })
  web = await makeWeb(server)
  owner = await web.signUp("owner@example.com")
  member = await web.invited(owner, "member@example.com")
  const spec = await (await server.get("/openapi.json")).json() as { paths: Record<string, Record<string, unknown>> }
  stateChanging = Object.entries(spec.paths).flatMap(([path, operations]) =>
    Object.keys(operations)
      .filter((method) => ["post", "put", "patch", "delete"].includes(method))
      .filter(() => path.startsWith("/web/") && path !== "/web/signup" && path !== "/web/signin")
      .map((method) => ({ method: method.toUpperCase(), path }))
  )
})
afterAll(async () => server?.close())

const concrete = (path: string) => path.replace(/\{[^}]+\}/g, someId)

describe("CSRF", () => {
  it("covers every state-changing website route", () => {
    expect(stateChanging.map((route) => `${route.method} ${route.path}`).sort()).toEqual([
      "POST /web/admin/accounts",
      "POST /web/admin/accounts/{id}/access",
      "POST /web/admin/accounts/{id}/credits",
      "POST /web/admin/accounts/{id}/plan",
      "POST /web/admin/checkouts/{id}/confirm",
      "POST /web/admin/invites",
      "POST /web/keys",
      "POST /web/keys/{id}/revoke",
      "POST /web/keys/{id}/rotate",
      "POST /web/signout",
      "POST /web/signout-all"
    ])
  })

  it("refuses each with 403 CSRF_FAILED without the token, and with another session's token", async () => {
    const other = await web.signIn("owner@example.com")
    for (const { method, path } of stateChanging) {
      const json = bodies[path]
      expectCode(await web.call(method, concrete(path), { cookie: owner.cookie, json }), 403, "CSRF_FAILED")
      expectCode(await web.call(method, concrete(path), { cookie: owner.cookie, csrf: other.csrf, json }), 403, "CSRF_FAILED")
      expectCode(await web.call(method, concrete(path), { cookie: owner.cookie, csrf: "", json }), 403, "CSRF_FAILED")
    }
    // Nothing happened: the owner is still signed in and no key, account or invite was made.
    expect((await web.as(owner, "GET", "/web/keys")).body.keys).toEqual([])
    expect((await web.as(owner, "GET", "/web/admin/accounts")).body.accounts.map((a: { email: string }) => a.email).sort())
      .toEqual(["member@example.com", "owner@example.com"])
  })

  it("passes with the session's own token", async () => {
    const created = await web.as(owner, "POST", "/web/keys", { json: { name: "ci" } })
    expect(created.status).toBe(200)
    expect(created.body.key).toMatch(/^vb_/)
  })

  it("asks for a sign-in on each without a cookie", async () => {
    for (const { method, path } of stateChanging) {
      expectCode(await web.call(method, concrete(path), { json: bodies[path] }), 401, "SIGN_IN_REQUIRED")
    }
  })
})

describe("the Admin page's endpoints", () => {
  it("refuse a member with 403 OWNER_ONLY, reads and changes alike", async () => {
    const adminRoutes = [{ method: "GET", path: "/web/admin/accounts" }, ...stateChanging.filter((r) => r.path.startsWith("/web/admin/"))]
    expect(adminRoutes.length).toBe(7)
    for (const { method, path } of adminRoutes) {
      const json = method === "GET" ? undefined : bodies[path]
      expectCode(await web.as(member, method, concrete(path), { json }), 403, "OWNER_ONLY")
    }
  })

  it("do for the owner what the admin CLI does", async () => {
    const made = await web.as(owner, "POST", "/web/admin/accounts", { json: { email: "Team@Example.com", api_access: true } })
    expect(made.status).toBe(200)
    expect(made.body).toMatchObject({ email: "team@example.com", role: "member", api_access: true, signed_up: false, balance_minutes: 0 })
    expectCode(await web.as(owner, "POST", "/web/admin/accounts", { json: { email: "team@example.com" } }), 409, "ACCOUNT_EXISTS")
    const id = made.body.account_id
    expect((await web.as(owner, "POST", `/web/admin/accounts/${id}/plan`, { json: { plan: "workspace" } })).body.plan).toBe("workspace")
    expect((await web.as(owner, "POST", `/web/admin/accounts/${member.accountId}/access`)).body.api_access).toBe(true)
    const credits = await web.as(owner, "POST", `/web/admin/accounts/${member.accountId}/credits`, { json: { minutes: 120 } })
    expect(credits.body).toEqual({ account_id: member.accountId, balance_minutes: 120, unlocked_jobs: 0 })
    expectCode(await web.as(owner, "POST", `/web/admin/accounts/${someId}/credits`, { json: { minutes: 1 } }), 404, "NOT_FOUND")
    expectCode(await web.as(owner, "POST", "/web/admin/accounts/not-a-uuid/access"), 400, "BAD_ID")
    expectCode(await web.as(owner, "POST", `/web/admin/accounts/${id}/credits`, { json: { minutes: -5 } }), 422, "VALIDATION_FAILED")

    // A pay link the member opened (by session on /v1), confirmed by the owner: credited once.
    const checkout = await fetch(`${server.url}/v1/checkout`, {
      method: "POST",
      headers: { Authorization: `Bearer ${member.accessToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ sku: "mini-4" })
    })
    expect(checkout.status).toBe(200)
    const link = await checkout.json() as { id: string }
    const confirmed = await web.as(owner, "POST", `/web/admin/checkouts/${link.id}/confirm`)
    expect(confirmed.body).toMatchObject({ id: link.id, status: "paid", already_paid: false, account_id: member.accountId })
    expect((await web.as(owner, "POST", `/web/admin/checkouts/${link.id}/confirm`)).body.already_paid).toBe(true)
    expectCode(await web.as(owner, "POST", "/web/admin/checkouts/txn_unknown/confirm"), 404, "NOT_FOUND")
    const listed = await web.as(owner, "GET", "/web/admin/accounts")
    expect(listed.body.accounts.find((a: { account_id: string }) => a.account_id === member.accountId).balance_minutes).toBe(620)
  })
})

describe("sign-up and sign-in from a browser", () => {
  it("are refused from another origin and accepted from the service's own", async () => {
    const foreign = await web.call("POST", "/web/signin", {
      json: { email: "owner@example.com", password },
      headers: { Origin: "https://evil.example" }
    })
    expectCode(foreign, 403, "BROWSER_FORBIDDEN")
    expect(foreign.headers.getSetCookie()).toEqual([])
    expectCode(
      await web.call("POST", "/web/signup", { json: { email: "x@example.com", password }, headers: { Origin: "https://evil.example" } }),
      403,
      "BROWSER_FORBIDDEN"
    )
    const own = await web.call("POST", "/web/signin", {
      json: { email: "owner@example.com", password },
      headers: { Origin: server.url, "Sec-Fetch-Site": "same-origin" }
    })
    expect(own.status).toBe(200)
    expect((await web.call("GET", "/web/session", { headers: { Origin: server.url } })).status).toBe(200)
  })

  it("refuses a state change with the cookie and token from another origin", async () => {
    const foreign = await web.as(owner, "POST", "/web/keys", { json: { name: "x" }, headers: { Origin: "https://evil.example" } })
    expectCode(foreign, 403, "BROWSER_FORBIDDEN")
  })
})
