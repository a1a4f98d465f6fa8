/**
 * The search contract on the Meilisearch backend. Runs only when `MEILI_URL` (and
 * `MEILI_MASTER_KEY` if the server has one) names a server that answers /health; no
 * server is reachable on the CI machines, and then this file says plainly it skipped.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { MeiliSearchBackend } from "../../search/MeiliSearchBackend.ts"
import { SearchIndex } from "../../search/SearchIndex.ts"
import { searchContract } from "./contract.ts"
import { embedderLayer } from "./support.ts"

const url = process.env["MEILI_URL"] ?? ""
const apiKey = process.env["MEILI_MASTER_KEY"]

const answers = url === ""
  ? false
  : await fetch(new URL("/health", url), { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false)

if (!answers) {
  console.log(
    url === ""
      ? "SKIPPED: Meilisearch search tests (MEILI_URL is not set)"
      : `SKIPPED: Meilisearch search tests (${url} does not answer /health)`
  )
}

const indexUid = `verbatim_test_${process.pid}_${Date.now().toString(36)}`
const backend = MeiliSearchBackend.layer({ url, apiKey, index: indexUid })

describe.skipIf(!answers)("Meilisearch backend", () => {
  searchContract("Meilisearch", SearchIndex.layer.pipe(Layer.provide(backend), Layer.provide(embedderLayer)))
})

describe("Meilisearch backend without a server", () => {
  it.live("fails the layer with MeilisearchUnavailable", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.scoped(Layer.build(MeiliSearchBackend.layer({ url: "http://127.0.0.1:9", index: "nowhere" })))
      )
      expect(error._tag).toBe("MeilisearchUnavailable")
    }))
})
