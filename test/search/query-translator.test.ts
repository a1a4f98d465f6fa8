/**
 * QueryTranslator on Debian's Apertium: warm pipelines answer each question with its own
 * translation, also when many are asked at once; a folder without the pair translates nothing;
 * a pipeline that does not answer gives no translation within the timeout and is started again.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { QueryTranslator } from "../../search/QueryTranslator.ts"
import { apertiumDir, apertiumRuns } from "../support/apertium.ts"

/** A data folder whose es→en "pipeline" is the given shell command. */
const fakeDir = (command: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-apertium-"))
  fs.mkdirSync(path.join(dir, "modes"))
  fs.writeFileSync(path.join(dir, "modes", "spa-eng.mode"), `${command}\n`)
  return dir
}

describe("QueryTranslator without Apertium", () => {
  it.effect("a folder without the pair has no direction and translates nothing", () =>
    Effect.gen(function*() {
      const translator = yield* QueryTranslator
      expect(translator.directions).toEqual([])
      expect(yield* translator.translate("¿Qué día abre el mercado?", "es", "en")).toBeUndefined()
    }).pipe(Effect.provide(QueryTranslator.layer({ dir: fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-apertium-")) }))))

  it.live("a pipeline that does not answer gives no translation within the timeout, then is started again", () =>
    Effect.gen(function*() {
      // The first pipeline started is stuck (`sort -z` answers nothing until its input ends);
      // the next one passes each request back as its answer.
      const dir = fakeDir("")
      fs.writeFileSync(path.join(dir, "stage.sh"), `if [ -e "${dir}/started" ]; then exec cat; fi\ntouch "${dir}/started"\nexec sort -z\n`)
      fs.writeFileSync(path.join(dir, "modes", "spa-eng.mode"), `sh ${dir}/stage.sh -z\n`)
      const translator = yield* Layer.build(QueryTranslator.layer({ dir, timeoutMillis: 300, startTimeoutMillis: 300 })).pipe(Effect.map(Context.get(QueryTranslator)))
      const started = Date.now()
      expect(yield* translator.translate("¿Qué día abre el mercado?", "es", "en")).toBeUndefined()
      expect(Date.now() - started).toBeLessThan(5_000)
      // The killed pipeline is replaced: the next question is answered.
      expect(yield* translator.translate("hola", "es", "en")).toBe("hola")
      expect(translator.directions).toEqual([{ from: "es", to: "en" }])
    }).pipe(Effect.scoped))

  it.live("a pipeline whose programs fail is left out of the directions", () =>
    Effect.gen(function*() {
      // `false` exits at once, before any answer.
      const translator = yield* Layer.build(QueryTranslator.layer({ dir: fakeDir("false") })).pipe(Effect.map(Context.get(QueryTranslator)))
      expect(translator.directions).toEqual([{ from: "es", to: "en" }])
      const started = Date.now()
      expect(yield* translator.translate("hola", "es", "en")).toBeUndefined()
      expect(Date.now() - started).toBeLessThan(4_000)
      expect(translator.directions).toEqual([])
      expect(yield* translator.translate("hola", "es", "en")).toBeUndefined()
    }).pipe(Effect.scoped))
})

describe("QueryTranslator on Apertium", () => {
  if (!apertiumRuns("QueryTranslator on Apertium")) return
  it.layer(QueryTranslator.layer({ dir: apertiumDir }), { timeout: 60_000 })((it) => {
    it.effect("translates a question both ways", () =>
      Effect.gen(function*() {
        const translator = yield* QueryTranslator
        expect(translator.directions).toEqual([{ from: "es", to: "en" }, { from: "en", to: "es" }])
        expect(yield* translator.translate("¿Cuántos metros de acantilado pierde la costa cada año?", "es", "en"))
          .toBe("How many metres of cliff loses the coast every year?")
        expect(yield* translator.translate("when is the library open", "en", "es")).toContain("biblioteca")
        // The stream format's reserved characters survive the trip.
        expect(yield* translator.translate("¿Cuesta $5 [o] más?", "es", "en")).toContain("$5 [or] more")
        expect(yield* translator.translate("hola", "fr", "en")).toBeUndefined()
      }))

    it.effect("answers questions asked at once each with its own translation", () =>
      Effect.gen(function*() {
        const translator = yield* QueryTranslator
        const questions = ["¿Qué día abre el mercado?", "¿A qué hora cierra la biblioteca?", "¿Va a llover mucho esta noche?", "hola"]
        const alone = yield* Effect.forEach(questions, (q) => translator.translate(q, "es", "en"))
        const asked = Array.from({ length: 40 }, (_, i) => questions[i % questions.length]!)
        const together = yield* Effect.forEach(asked, (q) => translator.translate(q, "es", "en"), { concurrency: "unbounded" })
        expect(together).toEqual(asked.map((q) => alone[questions.indexOf(q)]))
        expect(alone[0]).toContain("market")
      }))
  })
})
