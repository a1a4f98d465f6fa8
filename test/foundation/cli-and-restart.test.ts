/**
 * The admin CLI as an operator runs it (real processes), and a server restart that keeps
 * its data: the embedded data dir (or the Postgres database) survives the process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestStorage, type TestStorage } from "../support/database.ts"
import { runCli, runCliJson, startServerProcess } from "../support/process.ts"

let storage: TestStorage

beforeAll(async () => {
  storage = await makeTestStorage("cli")
})
afterAll(async () => {
  await storage?.dispose()
})

interface IssuedKey {
  readonly key: string
  readonly id: string
  readonly prefix: string
}

describe("admin CLI", () => {
  it("creates an account and a key that the server then accepts, across a restart", async () => {
    const account = await runCliJson<{ id: string; email: string }>(
      ["admin", "account", "create", "--email", "Ops@Example.com", "--api-access"],
      storage.env
    )
    expect(account.email).toBe("ops@example.com")
    const issued = await runCliJson<IssuedKey>(["admin", "key", "create", "--email", "ops@example.com"], storage.env)
    expect(issued.key).toMatch(/^vb_/)

    const first = await startServerProcess(storage.env)
    try {
      const me = await fetch(`${first.url}/v1/me`, { headers: { "X-API-Key": issued.key } })
      expect(me.status).toBe(200)
      expect(await me.json()).toMatchObject({ email: "ops@example.com", tier: "free" })
      // While the server owns the embedded database, the CLI works through it.
      const planned = await runCliJson<{ plan: string }>(
        ["admin", "plan", "set", "--email", "ops@example.com", "--plan", "enterprise"],
        storage.env
      )
      expect(planned.plan).toBe("enterprise")
    } finally {
      await first.stop()
    }

    const second = await startServerProcess(storage.env)
    try {
      const me = await fetch(`${second.url}/v1/me`, { headers: { "X-API-Key": issued.key } })
      expect(me.status).toBe(200)
      expect(await me.json()).toMatchObject({
        email: "ops@example.com",
        tier: "paid",
        plan: { id: "enterprise", requests_per_minute: 120, completion: "webhook" }
      })
    } finally {
      await second.stop()
    }
  })

  it("lists, rotates and revokes keys, never printing a secret in a listing", async () => {
    await runCliJson(["admin", "account", "create", "--email", "keys@example.com", "--api-access"], storage.env)
    const a = await runCliJson<IssuedKey>(["admin", "key", "create", "--email", "keys@example.com", "--name", "ci"], storage.env)
    const b = await runCliJson<IssuedKey>(["admin", "key", "create", "--email", "keys@example.com"], storage.env)
    const rotated = await runCliJson<IssuedKey>(
      ["admin", "key", "rotate", "--email", "keys@example.com", "--key", a.prefix],
      storage.env
    )
    expect(rotated.key).not.toBe(a.key)
    const revoked = await runCliJson<{ status: string }>(
      ["admin", "key", "revoke", "--email", "keys@example.com", "--key", b.id],
      storage.env
    )
    expect(revoked.status).toBe("revoked")
    const listing = await runCli(["admin", "key", "list", "--email", "keys@example.com"], storage.env)
    expect(listing.code).toBe(0)
    const keys = JSON.parse(listing.stdout) as Array<{ id: string; status: string; name: string | null }>
    expect(keys.map((k) => [k.id, k.status])).toEqual([
      [a.id, "rotating"],
      [b.id, "revoked"],
      [rotated.id, "active"]
    ])
    expect(keys[2]!.name).toBe("ci")
    for (const secret of [a.key, b.key, rotated.key]) expect(listing.stdout).not.toContain(secret)
  })

  it("grants credit to the ledger", async () => {
    await runCliJson(["admin", "account", "create", "--email", "credit@example.com"], storage.env)
    await runCliJson(["admin", "credits", "grant", "--email", "credit@example.com", "--minutes", "30"], storage.env)
    const second = await runCliJson<{ balance_minutes: number }>(
      ["admin", "credits", "grant", "--email", "credit@example.com", "--minutes", "12.5", "--note", "goodwill"],
      storage.env
    )
    expect(second.balance_minutes).toBe(42.5)
  })

  it("shows an account's webhook signing secret, the same every time", async () => {
    await runCliJson(["admin", "account", "create", "--email", "hooks@example.com"], storage.env)
    const first = await runCliJson<{ webhook_secret: string }>(["admin", "webhook", "secret", "--email", "hooks@example.com"], storage.env)
    expect(first.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/=]{20,}$/)
    const again = await runCliJson<{ webhook_secret: string }>(["admin", "webhook", "secret", "--email", "hooks@example.com"], storage.env)
    expect(again.webhook_secret).toBe(first.webhook_secret)
  })

  it("explains failures on stderr with exit code 1", async () => {
    await runCliJson(["admin", "account", "create", "--email", "dup@example.com"], storage.env)
    const duplicate = await runCli(["admin", "account", "create", "--email", "dup@example.com"], storage.env)
    expect(duplicate.code).toBe(1)
    expect(duplicate.stderr).toMatch(/already exists/)
    const noAccess = await runCli(["admin", "key", "create", "--email", "dup@example.com"], storage.env)
    expect(noAccess.code).toBe(1)
    expect(noAccess.stderr).toMatch(/no API access/)
    await runCliJson(["admin", "access", "grant", "--email", "dup@example.com"], storage.env)
    expect((await runCli(["admin", "key", "create", "--email", "dup@example.com"], storage.env)).code).toBe(0)
    const unknown = await runCli(["admin", "key", "create", "--email", "nobody@example.com"], storage.env)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/No account matches nobody@example.com/)
    const badEmail = await runCli(["admin", "account", "create", "--email", "not-an-email"], storage.env)
    expect(badEmail.code).toBe(1)
    expect(badEmail.stderr).toMatch(/not an email/)
    const negative = await runCli(["admin", "credits", "grant", "--email", "dup@example.com", "--minutes", "-5"], storage.env)
    expect(negative.code).toBe(1)
    expect(negative.stderr).toMatch(/positive number of minutes/)
  })
})

describe("configuration", () => {
  it("refuses an unknown VERBATIM_* variable, naming it", async () => {
    const result = await runCli(["serve"], { ...storage.env, VERBATIM_PROT: "8080" })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/VERBATIM_PROT/)
  })

  it("refuses an invalid value, naming the variable", async () => {
    for (const [name, value] of [["VERBATIM_PORT", "eighty"], ["VERBATIM_LOG_LEVEL", "loud"], ["VERBATIM_RATE_LIMIT_PER_MINUTE", "0"], ["VERBATIM_BEAM_SIZE", "0"], ["VERBATIM_BEAM_SIZE", "17"], ["VERBATIM_BATCH_SIZE", "0"], ["VERBATIM_BATCH_SIZE", "many"], ["VERBATIM_CONDITION_ON_PREVIOUS_TEXT", "maybe"]]) {
      const result = await runCli(["serve"], { ...storage.env, [name!]: value! })
      expect(result.code, name).toBe(1)
      expect(result.stderr).toContain(name!)
      expect(result.stderr).toMatch(/invalid configuration/)
    }
  })
})
