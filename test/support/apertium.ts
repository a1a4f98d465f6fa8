/**
 * Whether the cross-lingual search tests can run here: they need Debian's Apertium with the
 * English–Spanish pair. Locally a machine without it skips them, saying so; in CI (`CI=true`,
 * where .ci/run installs it) a missing pair is a failing test, never a skip.
 */
import * as fs from "node:fs"
import { it } from "vitest"

export const apertiumDir = process.env["VERBATIM_TEST_APERTIUM_DIR"] ?? "/usr/share/apertium"

const installed = ["spa-eng.mode", "eng-spa.mode"].every((mode) => fs.existsSync(`${apertiumDir}/modes/${mode}`))

/** Whether the pair is installed; in CI a missing one throws (.ci/run installs it). */
export const apertiumInstalled = (): boolean => {
  if (!installed && process.env["CI"] === "true") throw new Error(`Apertium's English–Spanish pair is not under ${apertiumDir}: .ci/run installs it`)
  return installed
}

/** True when the suite named `suite` should run (see above). */
export const apertiumRuns = (suite: string): boolean => {
  if (installed) return true
  const reason = `Apertium's English–Spanish pair is not under ${apertiumDir}`
  if (process.env["CI"] === "true") {
    it(`${suite}: Apertium is required in CI`, () => {
      throw new Error(`${reason}: .ci/run installs it (apt-get install apertium apertium-eng-spa)`)
    })
    return false
  }
  console.log(`skipping "${suite}": ${reason} (apt-get install apertium apertium-eng-spa to run it; CI runs it)`)
  return false
}
