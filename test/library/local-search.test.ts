/**
 * The library's local search as a consumer imports it (`from "verbatim"`), on real MiniLM
 * and an embedded PGlite data dir: transcripts made of the test media's reference texts are
 * indexed under the caller's ids, a paraphrased question finds the right one first, `ids`
 * restricts, `remove` forgets, a bad question is refused, a reopened data dir still answers,
 * and the Effect API's `localLibrary` layer serves the same. A client that never searches
 * never opens its data dir; an unusable data dir or a models folder without MiniLM fails the
 * first call. The example runs as a script.
 */
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createVerbatim, InvalidSearchQuery, LocalLibrary, localLibrary, type Transcript } from "verbatim"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { repoRoot } from "../support/process.ts"

const manifest = JSON.parse(fs.readFileSync(path.join(mediaDir, "manifest.json"), "utf8")) as Record<string, { text?: string }>

/** One segment a sentence, three seconds each. */
const transcriptOf = (text: string): Transcript => {
  const sentences = text.split(/(?<=[.?!])\s+/u)
  return {
    text,
    language: "en",
    duration: sentences.length * 3,
    speech_detected: true,
    segments: sentences.map((sentence, i) => ({ start: i * 3, end: i * 3 + 3, text: sentence, speaker: null }))
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-local-search-"))
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

const docs = {
  "budget-meeting": manifest["a01_slt_budget.wav"]!.text!,
  "weather": manifest["a02_kal_weather.wav"]!.text!,
  "library-notice": manifest["a03_espeak_library.wav"]!.text!
}

describe("Promise API", () => {
  it("indexes, searches, filters by id, removes, and finds the index again after reopening", async () => {
    const verbatim = createVerbatim({ modelsDir, dataDir })
    try {
      for (const [id, text] of Object.entries(docs)) {
        expect(await verbatim.index(id, transcriptOf(text), { filename: `${id}.wav` })).toBeGreaterThan(0)
      }
      const rain = await verbatim.search("will it storm this evening?")
      expect(rain[0]?.job_id).toBe("weather")
      expect(rain[0]?.filename).toBe("weather.wav")
      expect(rain[0]?.text).toMatch(/rain/)

      const money = await verbatim.search("when do we discuss spending and recruiting staff")
      expect(money[0]?.job_id).toBe("budget-meeting")
      expect(money[0]?.start).toBeGreaterThanOrEqual(0)

      const only = await verbatim.search("will it storm this evening?", { ids: ["library-notice"] })
      expect(only.length).toBeGreaterThan(0)
      expect(only.every((hit) => hit.job_id === "library-notice")).toBe(true)

      await expect(verbatim.search("   ")).rejects.toThrow(/q must be/)
      await expect(verbatim.search("rain", { limit: 0 })).rejects.toThrow(/limit/)

      await verbatim.remove("weather")
      const after = await verbatim.search("will it storm this evening?")
      expect(after.some((hit) => hit.job_id === "weather")).toBe(false)
    } finally {
      await verbatim.close()
    }

    const reopened = createVerbatim({ modelsDir, dataDir })
    try {
      const hits = await reopened.search("what time does the reading room open")
      expect(hits[0]?.job_id).toBe("library-notice")
      expect(hits.some((hit) => hit.job_id === "weather")).toBe(false)
    } finally {
      await reopened.close()
    }
  }, 180_000)
})

describe("Effect API", () => {
  it("serves LocalLibrary from the localLibrary layer and fails a bad question with InvalidSearchQuery", async () => {
    const program = Effect.gen(function*() {
      const library = yield* LocalLibrary
      yield* library.index("podcast", transcriptOf(manifest["a04_ked_podcast.wav"]!.text!))
      const hits = yield* library.search("volunteers saving the local press")
      // An empty question fails with the typed error, never a defect (a defect would reject the run).
      const refused = yield* Effect.flip(library.search(""))
      return { hits, refused }
    })
    const { hits, refused } = await Effect.runPromise(Effect.provide(program, localLibrary({ modelsDir, dataDir })))
    expect(hits[0]?.job_id).toBe("podcast")
    expect(hits[0]?.filename).toBeNull()
    expect(refused).toBeInstanceOf(InvalidSearchQuery)
    expect(refused._tag).toBe("InvalidSearchQuery")
  }, 120_000)
})

describe("opening", () => {
  it("a client that only closes never creates its data dir", async () => {
    const unused = path.join(dataDir, "never-opened")
    await createVerbatim({ modelsDir, dataDir: unused }).close()
    expect(fs.existsSync(unused)).toBe(false)
  })

  it("a data dir that is a file fails the first index", async () => {
    const file = path.join(dataDir, "a-file")
    fs.writeFileSync(file, "not a directory")
    const verbatim = createVerbatim({ modelsDir, dataDir: file })
    try {
      await expect(verbatim.index("x", transcriptOf(docs.weather))).rejects.toThrow()
    } finally {
      await verbatim.close()
    }
  }, 60_000)

  it("a models folder without MiniLM fails indexing", async () => {
    const verbatim = createVerbatim({ modelsDir: path.join(dataDir, "no-models"), dataDir: path.join(dataDir, "no-models-db") })
    try {
      await expect(verbatim.index("x", transcriptOf(docs.weather))).rejects.toThrow()
    } finally {
      await verbatim.close()
    }
  }, 60_000)
})

describe("examples", () => {
  it("examples/local-search.ts transcribes, indexes and answers", () => {
    const run = spawnSync(
      process.execPath,
      ["examples/local-search.ts", "when does the reading room open?", path.join(mediaDir, "a01_slt_budget.wav"), path.join(mediaDir, "a03_espeak_library.wav")],
      { cwd: repoRoot, encoding: "utf8", timeout: 120_000, env: { ...process.env, VERBATIM_LIBRARY_DIR: path.join(dataDir, "example") } }
    )
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout.split("\n")[0]).toMatch(/^a03_espeak_library\.wav .*reading room/)
  }, 120_000)
})
