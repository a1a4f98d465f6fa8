import { defineConfig } from "vitest/config"

/**
 * Test files whose answers do not depend on `VERBATIM_TEST_DATABASE_URL`: they never open a
 * database (the pipeline, pure algorithms, renderers) or only ever their own embedded PGlite (the
 * library API's local search, the embedded-Postgres tests). CI's second pass, against a real Postgres,
 * sets `VERBATIM_TEST_DATABASE_ONLY=1` to leave them out: they ran in the first pass, and running
 * them again costs about 4 minutes of CI's 35 (measured: ~500 s of test time at 2 workers).
 */
const databaseFree = [
  "test/pipeline/**",
  "test/clips/captions.test.ts",
  "test/clips/word-alignment.test.ts",
  "test/insights/algorithms.test.ts",
  "test/insights/content.test.ts",
  "test/insights/extractive.test.ts",
  "test/insights/speaker-names.test.ts",
  "test/quality/pipeline.test.ts",
  "test/search/clip-candidates.test.ts",
  "test/search/embedder.test.ts",
  "test/search/fulltext-query.test.ts",
  "test/search/passages.test.ts",
  "test/services/formats.test.ts",
  "test/speech/caption-shaping.test.ts",
  "test/web/format.test.ts",
  "test/foundation/app-config.test.ts",
  "test/hostile/media-storage.test.ts",
  "test/contract/openapi-document.test.ts",
  "test/foundation/embedded-postgres.test.ts",
  "test/insights/llm.test.ts",
  "test/library/library.test.ts",
  "test/library/local-search.test.ts",
  "test/services/links-*.test.ts",
  "test/web/assets.test.ts"
]

// Tests share two cores with the ONNX sessions they start: files run in forked
// processes, two at a time, so a heavy model test never fights a third process.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["**/node_modules/**", ...(process.env["VERBATIM_TEST_DATABASE_ONLY"] === "1" ? databaseFree : [])],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 120_000,
    // expect.poll answers as soon as its check holds; vitest's 1 s default failed a browser test
    // waiting for audio metadata at load 10 on CI's 2 cores.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 120_000
  }
})
