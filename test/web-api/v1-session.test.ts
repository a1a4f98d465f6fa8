/**
 * A signed-in user on `/v1/*` (issue 23), over real sockets: `Authorization: Bearer vbs_…` is
 * the session's account (`signed_in: true`, its library, its balance); anything else as Bearer
 * keeps the sentence pointing at `X-API-Key`. The key panel's keys work with curl until revoked.
 * Browsers: the service's own pages may call /v1 with the session token, never with a key, and
 * no other origin may call at all. The owner's own use is not held back by the balance; members
 * are metered. Answers are checked against /openapi.json.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "../support/server.ts"
import { waitForJob } from "../support/jobsClient.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"
import { expectCode, makeWeb, type WebUser } from "./support.ts"

let server: TestServer
let web: Awaited<ReturnType<typeof makeWeb>>
let owner: WebUser
let member: WebUser

beforeAll(async () => {
  server = await startServer("web-v1-session", {}, { pipeline: makeStandIn({ delayMs: 50, steps: 1 }).layer })
  web = await makeWeb(server)
  owner = await web.signUp("owner@example.com")
  member = await web.invited(owner, "member@example.com")
})
afterAll(async () => server?.close())

const bearer = (user: WebUser, extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${user.accessToken}`, ...extra })

const me = (headers: Record<string, string>) => web.call("GET", "/v1/me", { headers })

/** `POST /v1/transcribe` with a small WAV, checked against the document. */
const submit = async (headers: Record<string, string>) => {
  const form = new FormData()
  form.append("file", new Blob([tinyWav() as Uint8Array<ArrayBuffer>], { type: "audio/wav" }), "talk.wav")
  const url = `${server.url}/v1/transcribe`
  const checked = await web.checker.check("POST", url, await fetch(url, { method: "POST", headers, body: form }))
  return { status: checked.status, body: checked.body, headers: checked.headers }
}

describe("Authorization: Bearer on /v1", () => {
  it("with a session's access token is that user: signed_in true", async () => {
    const answer = await me(bearer(member))
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ email: "member@example.com", signed_in: true, account_id: member.accountId })
  })

  it("keeps pointing a key sent as Bearer at X-API-Key, and refuses an unknown session token", async () => {
    const { key } = await server.account()
    const asBearer = await me({ Authorization: `Bearer ${key}` })
    expectCode(asBearer, 401, "MISSING_API_KEY")
    expect(asBearer.body.error).toBe("API keys go in the X-API-Key header; Authorization: Bearer is reserved for user sign-in.")
    expectCode(await me({ Authorization: "Bearer vbs_not-a-session" }), 401, "INVALID_SESSION")
    expectCode(await web.call("GET", "/v1/jobs", { headers: { Authorization: "Bearer vbs_not-a-session" } }), 401, "INVALID_SESSION")
  })
})

describe("the key panel", () => {
  it("creates a key shown once that works with curl, rotates it with 24 h overlap, and revokes it: 401", async () => {
    const created = await web.as(owner, "POST", "/web/keys", { json: { name: "laptop" } })
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({ name: "laptop", status: "active", expires_at: null, last_used_at: null })
    const key: string = created.body.key
    expect(created.body.prefix).toBe(key.slice(0, 11))

    const byKey = await me({ "X-API-Key": key })
    expect(byKey.body).toMatchObject({ email: "owner@example.com", signed_in: false })

    const rotated = await web.as(owner, "POST", `/web/keys/${created.body.id}/rotate`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.replaced_key_id).toBe(created.body.id)
    const overlap = Date.parse(rotated.body.replaced_key_expires_at) - Date.now()
    expect(overlap).toBeGreaterThan(23.9 * 3600_000)
    expect(overlap).toBeLessThan(24.1 * 3600_000)
    expect((await me({ "X-API-Key": key })).status).toBe(200)
    expect((await me({ "X-API-Key": rotated.body.key })).status).toBe(200)

    const listed = await web.as(owner, "GET", "/web/keys")
    expect(listed.body.limit).toBe(10)
    const statuses = Object.fromEntries(listed.body.keys.map((k: { id: string; status: string }) => [k.id, k.status]))
    expect(statuses).toEqual({ [created.body.id]: "rotating", [rotated.body.id]: "active" })
    expect(listed.body.keys.find((k: { id: string }) => k.id === created.body.id).last_used_at).not.toBeNull()
    expect(JSON.stringify(listed.body)).not.toContain(key)

    expect((await web.as(owner, "POST", `/web/keys/${rotated.body.id}/revoke`)).status).toBe(204)
    expectCode(await me({ "X-API-Key": rotated.body.key }), 401, "INVALID_API_KEY")
    expectCode(await web.as(owner, "POST", `/web/keys/${rotated.body.id}/revoke`), 404, "NOT_FOUND")
  })

  it("holds 10 active keys at most", async () => {
    const active = (await web.as(owner, "GET", "/web/keys")).body.keys.filter((k: { status: string }) => k.status === "active").length
    for (let i = active; i < 10; i++) expect((await web.as(owner, "POST", "/web/keys", { json: {} })).status).toBe(200)
    const refused = await web.as(owner, "POST", "/web/keys", { json: {} })
    expectCode(refused, 409, "KEY_LIMIT")
    expect(refused.body.limit).toBe(10)
  })

  it("answers a member without API access 402 API_ACCESS_REQUIRED with the upgrade and pay links", async () => {
    const refused = await web.as(member, "POST", "/web/keys", { json: {} })
    expectCode(refused, 402, "API_ACCESS_REQUIRED")
    expect(refused.body.upgrade_url).toBe(`${server.url}/pricing`)
    expect(refused.body.checkout_url).toMatch(new RegExp(`^${server.url}/checkout/`))
  })
})

describe("browsers", () => {
  it("may call /v1 from the service's own origin with the session token", async () => {
    const answer = await me(bearer(member, { Origin: server.url, "Sec-Fetch-Site": "same-origin" }))
    expect(answer.status).toBe(200)
    expect(answer.body.signed_in).toBe(true)
  })

  it("may never use an API key, not even from the service's own pages", async () => {
    const { key } = await server.account()
    expectCode(await me({ "X-API-Key": key, Origin: server.url }), 403, "BROWSER_FORBIDDEN")
    expectCode(await me({ "X-API-Key": key, "Sec-Fetch-Site": "same-origin" }), 403, "BROWSER_FORBIDDEN")
    expectCode(await me({ "X-API-Key": key, Origin: "https://evil.example" }), 403, "BROWSER_FORBIDDEN")
  })

  it("may not call /v1 from another origin, nor without a session from the own one", async () => {
    expectCode(await me(bearer(member, { Origin: "https://evil.example" })), 403, "BROWSER_FORBIDDEN")
    expectCode(await me({ Origin: server.url }), 403, "BROWSER_FORBIDDEN")
    expectCode(await me({ Origin: "null" }), 403, "BROWSER_FORBIDDEN")
  })
})

describe("library and balance by session", () => {
  it("answers another account's job 404 and lists only the account's own", async () => {
    const other = await server.account()
    const theirs = await submit({ "X-API-Key": other.key })
    expect(theirs.status).toBe(202)
    expectCode(await web.call("GET", `/v1/jobs/${theirs.body.job_id}`, { headers: bearer(member) }), 404, "NOT_FOUND")
    expectCode(await web.call("DELETE", `/v1/jobs/${theirs.body.job_id}`, { headers: bearer(member) }), 404, "NOT_FOUND")
    const list = await web.call("GET", "/v1/jobs", { headers: bearer(member) })
    expect(list.status).toBe(200)
    expect(JSON.stringify(list.body)).not.toContain(theirs.body.job_id)
  })

  it("meters a member: no credit, 402 NO_CREDITS", async () => {
    const fresh = await web.invited(owner, "broke@example.com")
    const refused = await submit(bearer(fresh))
    expect(refused.status).toBe(402)
    expect(refused.body.code).toBe("NO_CREDITS")
  })

  it("does not hold the owner back with a zero balance: accepted, done, readable, not charged", async () => {
    const balance = async () =>
      (await web.as(owner, "GET", "/web/admin/accounts")).body.accounts.find((a: { role: string }) => a.role === "owner").balance_minutes
    expect(await balance()).toBe(0)
    const accepted = await submit(bearer(owner, { Origin: server.url }))
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202)
    const job = await waitForJob(server, undefined, accepted.body.job_id, undefined, { headers: bearer(owner) })
    expect(job.status).toBe("done")
    expect(job.locked).toBe(false)
    const text = await web.call("GET", `/v1/jobs/${job.job_id}/result?format=txt`, { headers: bearer(owner) })
    expect(text.status).toBe(200)
    expect(await balance()).toBe(0)
    const credits = await web.call("GET", "/v1/usage", { headers: bearer(owner) })
    expect(credits.body.daily_allowance_minutes).toBeNull()
  })

  it("takes a direct upload from the page: init, PUT and commit by session token, from the own origin", async () => {
    const page = bearer(owner, { Origin: server.url, "Content-Type": "application/json" })
    const bytes = tinyWav()
    const init = await fetch(`${server.url}/v1/uploads/init`, {
      method: "POST",
      headers: page,
      body: JSON.stringify({ filename: "big.wav", size_bytes: bytes.length, content_type: "audio/wav" })
    })
    const ticket = await init.json() as { job_id: string; upload_url: string; method: string; headers: Record<string, string>; object_key: string; options: unknown }
    expect(init.status, JSON.stringify(ticket)).toBe(200)
    const put = await fetch(ticket.upload_url, {
      method: ticket.method,
      headers: { ...bearer(owner, { Origin: server.url }), ...ticket.headers },
      body: bytes as Uint8Array<ArrayBuffer>
    })
    expect(put.status).toBe(200)
    const commit = await fetch(`${server.url}/v1/uploads/${ticket.job_id}/commit`, {
      method: "POST",
      headers: page,
      body: JSON.stringify({ object_key: ticket.object_key, options: ticket.options })
    })
    expect(commit.status).toBe(202)
    expect((await waitForJob(server, undefined, ticket.job_id, undefined, { headers: bearer(owner) })).status).toBe("done")
  })

  it("scopes Idempotency-Key per session: a retry replays, another session or a key makes its own job", async () => {
    await web.as(owner, "POST", `/web/admin/accounts/${member.accountId}/credits`, { json: { minutes: 100 } })
    const first = await submit(bearer(member, { "Idempotency-Key": "upload-1" }))
    expect(first.status).toBe(202)
    const replay = await submit(bearer(member, { "Idempotency-Key": "upload-1" }))
    expect(replay.status).toBe(200)
    expect(replay.body.job_id).toBe(first.body.job_id)
    expect(replay.headers.get("x-idempotent-replay")).toBe("true")
    const otherSession = await web.signIn("member@example.com")
    const second = await submit(bearer(otherSession, { "Idempotency-Key": "upload-1" }))
    expect(second.status).toBe(202)
    expect(second.body.job_id).not.toBe(first.body.job_id)
    await web.as(owner, "POST", `/web/admin/accounts/${member.accountId}/access`)
    const key = (await web.as(member, "POST", "/web/keys", { json: {} })).body.key as string
    const byKey = await submit({ "X-API-Key": key, "Idempotency-Key": "upload-1" })
    expect(byKey.status).toBe(202)
    expect(new Set([first.body.job_id, second.body.job_id, byKey.body.job_id]).size).toBe(3)
    // All are the member's: one library for every session and key of the account.
    expect((await web.call("GET", `/v1/jobs/${first.body.job_id}`, { headers: bearer(otherSession) })).status).toBe(200)
    expect((await web.call("GET", `/v1/jobs/${byKey.body.job_id}`, { headers: bearer(member) })).status).toBe(200)
  })
})
