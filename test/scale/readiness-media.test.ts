/**
 * `/readyz`'s `disk` check looks at the media directory too when VERBATIM_MEDIA_DIR puts it
 * outside the data dir (a shared mount fills up on its own), naming both figures; before the
 * first upload creates the media dir, its nearest existing parent is measured, so a fresh
 * process is ready. With the default media dir (inside the data dir) one figure as before.
 */
import { Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { DatabaseLayer } from "../../layers/Database.ts"
import { configLayerWith } from "../support/config.ts"
import { Readiness } from "../../services/ops/Readiness.ts"
import { makeTestStorage, type TestStorage } from "../support/database.ts"

const storages: Array<TestStorage> = []
afterAll(async () => {
  await Promise.all(storages.map((storage) => storage.dispose()))
})

const diskCheck = async (mediaDir: Option.Option<string>) => {
  const storage = await makeTestStorage("readiness-media")
  storages.push(storage)
  const config = configLayerWith({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, mediaDir })
  const report = await Readiness.use((readiness) => readiness.check).pipe(
    Effect.provide(Readiness.layer.pipe(Layer.provideMerge(DatabaseLayer), Layer.provideMerge(config))),
    Effect.scoped,
    Effect.runPromise
  )
  return report.checks.find((check) => check.name === "disk")!
}

describe("readiness disk check and the media directory", () => {
  it("measures a media dir outside the data dir as well, and its parent before it exists", async () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-media-elsewhere-"))
    try {
      const check = await diskCheck(Option.some(path.join(elsewhere, "not-yet", "media")))
      expect(check.ok).toBe(true)
      expect(check.detail).toMatch(/^\d+ MB free; media: \d+ MB free$/)
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true })
    }
  }, 60_000)

  it("gives one figure when media lives in the data dir", async () => {
    const check = await diskCheck(Option.none())
    expect(check.ok).toBe(true)
    expect(check.detail).toMatch(/^\d+ MB free$/)
  }, 60_000)
})
