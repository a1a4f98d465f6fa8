/**
 * The quality set's cached transcripts stay what the real pipeline makes: the CLI (whisper,
 * diarization, word times, as `transcribe.sh` ran it) transcribes the shortest recording, the
 * 25 s voice memo, again; its words must match the cached transcript (word error rate against
 * it ≤ 0.1) and the insights of the fresh transcript must carry the memo's facts as the
 * cached one does. When the pipeline changes this much, rerun `bash test/quality/transcribe.sh`
 * and re-measure (`npx node bench/quality.ts`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Insights } from "../../services/insights/Insights.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { embedderLayer } from "../search/support.ts"
import { runCli } from "../support/process.ts"
import { wer } from "../support/wer.ts"
import { factCoverage, qualityDir, qualitySet } from "./set.ts"

const memo = qualitySet.find((r) => r.annotation.name === "q04_solar_memo")!

describe("quality set: the cached transcript is the pipeline's", () => {
  it.layer(Insights.layer().pipe(Layer.provideMerge(embedderLayer)), { timeout: 180_000 })((it) => {
    it.effect("the voice memo transcribed again matches its cache, and its summary carries its facts", () =>
      Effect.gen(function*() {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-quality-"))
        const result = yield* Effect.promise(() =>
          runCli(
            ["transcribe", path.join(qualityDir, memo.annotation.file!), "--language", "en", "--diarize", "--words", "--format", "json"],
            { VERBATIM_DATA_DIR: dataDir }
          )
        ).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(dataDir, { recursive: true, force: true }))))
        assert.strictEqual(result.code, 0, result.stderr)
        const fresh = JSON.parse(result.stdout) as Transcript
        const drift = wer(memo.transcript.text, fresh.text)
        assert.isAtMost(drift, 0.1, `cached: ${memo.transcript.text}\nfresh: ${fresh.text}`)
        const insights = yield* Insights
        const cached = factCoverage(memo, (yield* insights.generate(memo.transcript, { provider: "extractive" })).summary.text)
        const now = factCoverage(memo, (yield* insights.generate(fresh, { provider: "extractive" })).summary.text)
        // Measured: 5 of 6 facts (whisper hears "nine thousand dollars" as "$1000").
        assert.isAtLeast(cached.covered, 5)
        assert.isAtLeast(now.covered, cached.covered - 1)
      }))
  })
})
