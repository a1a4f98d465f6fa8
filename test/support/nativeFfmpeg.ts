/**
 * Whether the native ffmpeg paths (decode, probe, clip render) can be tested here. Locally a
 * machine without `ffmpeg` and `ffprobe` on PATH skips them, saying so on stdout; in CI
 * (`CI=true`, where .ci/run installs ffmpeg) they must run, so there a missing ffmpeg is a
 * failing test, never a skip.
 */
import { spawnSync } from "node:child_process"
import { it } from "vitest"

const runs = (command: string) => spawnSync(command, ["-hide_banner", "-version"], { stdio: "ignore", timeout: 10_000 }).status === 0

const missing = ["ffmpeg", "ffprobe"].filter((command) => !runs(command))

/**
 * True when the native suite named `suite` should run. False (skip) only outside CI, after
 * printing why; in CI a missing binary registers a failing test in the calling file instead.
 */
export const nativeFfmpegRuns = (suite: string): boolean => {
  if (missing.length === 0) return true
  const reason = `${missing.join(" and ")} not on PATH`
  if (process.env["CI"] === "true") {
    it(`${suite}: native ffmpeg is required in CI`, () => {
      throw new Error(`${reason}: .ci/run installs ffmpeg (apt-get install ffmpeg) so that the native paths are tested`)
    })
    return false
  }
  console.log(`skipping "${suite}": ${reason} (apt-get install ffmpeg to run it; CI runs it)`)
  return false
}
