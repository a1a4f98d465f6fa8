/** The value readers the area declarations share (each takes the variable name it reads). */
import { Config, Schema } from "effect"

export const positiveInt = (env: string) => Config.schema(Schema.Int.check(Schema.isGreaterThan(0)), env)

/** An integer in `minimum..maximum` (both included). */
export const intBetween = (minimum: number, maximum: number) => (env: string) =>
  Config.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })), env)

/** A TCP port; `minimum` 0 lets the OS pick a free one. */
export const port = (minimum: 0 | 1) => intBetween(minimum, 65535)

/** An absolute URL, without a trailing slash. */
export const url = (env: string) => Config.URL(env).pipe(Config.map((parsed) => parsed.href.replace(/\/$/, "")))

/** A comma-separated list; blanks between commas are dropped. */
export const list = (env: string) =>
  Config.String(env).pipe(
    Config.map((text): ReadonlyArray<string> => text.split(",").map((entry) => entry.trim()).filter((entry) => entry !== ""))
  )
