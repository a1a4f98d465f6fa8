/**
 * The HMAC secret behind signed links (upload and playback URLs) is never kept in the
 * database: it is derived from VERBATIM_SECRET_KEY, or, when that is unset, from a key file
 * in the data directory (mode 0600) created on first start. A plain-text secret left in the
 * database by an earlier version is removed and not used.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { createHmac } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, expect, it } from "vitest"
import { DatabaseLayer } from "../../layers/Database.ts"
import { type AllSettings, configLayerWith } from "../support/config.ts"
import { Signer } from "../../services/security/Signer.ts"
import { makeTestStorage, type TestStorage } from "../support/database.ts"

const storages: Array<TestStorage> = []
afterAll(async () => {
  for (const storage of storages) await storage.dispose()
})

const newStorage = async (label: string) => {
  const storage = await makeTestStorage(label)
  storages.push(storage)
  return storage
}

/** Starts Signer on `storage` (a process start), runs `use`, and stops. */
const withSigner = <A>(
  storage: TestStorage,
  overrides: Partial<AllSettings>,
  use: (signer: Signer["Service"], sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>
) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* use(yield* Signer, yield* SqlClient.SqlClient)
    }).pipe(
      Effect.provide(
        Signer.layer.pipe(
          Layer.provideMerge(DatabaseLayer),
          Layer.provideMerge(configLayerWith({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, ...overrides }))
        )
      )
    ) as Effect.Effect<A>
  )

const settings = (sql: SqlClient.SqlClient) => sql<{ key: string; value: string }>`SELECT key, value FROM instance_settings`

it("without VERBATIM_SECRET_KEY: a 0600 key file in the data dir, nothing in the database, stable across restarts", async () => {
  const storage = await newStorage("signer-file")
  const first = await withSigner(storage, {}, (signer, sql) =>
    Effect.map(settings(sql), (rows) => ({ signature: signer.sign("payload"), rows })))
  expect(first.rows.filter((row) => row.key.includes("sign"))).toEqual([])
  const keyFile = path.join(storage.dataDir, "secret.key")
  expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600)
  // The file holds the key the secret is derived from, not the secret itself.
  expect(first.signature).not.toBe(createHmac("sha256", fs.readFileSync(keyFile, "utf8").trim()).update("payload").digest("base64url"))
  const again = await withSigner(storage, {}, (signer) => Effect.succeed(signer.verify("payload", first.signature)))
  expect(again).toBe(true)
})

it("removes a plain-text secret an earlier version stored, and does not sign with it", async () => {
  const storage = await newStorage("signer-legacy")
  await withSigner(storage, {}, (_, sql) => sql`INSERT INTO instance_settings (key, value) VALUES ('signing_secret', 'legacy-secret')
    ON CONFLICT (key) DO UPDATE SET value = 'legacy-secret'`)
  const after = await withSigner(storage, {}, (signer, sql) =>
    Effect.map(settings(sql), (rows) => ({ signature: signer.sign("payload"), rows })))
  expect(after.rows.filter((row) => row.key === "signing_secret")).toEqual([])
  expect(after.signature).not.toBe(createHmac("sha256", "legacy-secret").update("payload").digest("base64url"))
})

it("with VERBATIM_SECRET_KEY: processes on different data dirs sign alike, another key does not verify", async () => {
  const key = Option.some(Redacted.make("an operator key of enough entropy 1f9c2e"))
  const a = await newStorage("signer-key-a")
  const b = await newStorage("signer-key-b")
  const signature = await withSigner(a, { secretKey: key }, (signer) => Effect.succeed(signer.sign("payload")))
  expect(fs.existsSync(path.join(a.dataDir, "secret.key"))).toBe(false)
  expect(await withSigner(b, { secretKey: key }, (signer) => Effect.succeed(signer.verify("payload", signature)))).toBe(true)
  const other = Option.some(Redacted.make("a different operator key 77ab10"))
  expect(await withSigner(b, { secretKey: other }, (signer) => Effect.succeed(signer.verify("payload", signature)))).toBe(false)
})
