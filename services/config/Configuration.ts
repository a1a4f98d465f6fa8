/**
 * All configuration areas of a Verbatim process. Each area (one file here) declares its settings
 * once; the known-variable list, the strict start check and the README's configuration table
 * are derived from those declarations. A `VERBATIM_*` variable no area declares is refused at
 * start, so a typo never silently falls back to a default.
 */
import { ConfigProvider, Effect, Layer, Schema } from "effect"
import { BillingConfig } from "./BillingConfig.ts"
import { DatabaseConfig } from "./DatabaseConfig.ts"
import { InsightsConfig } from "./InsightsConfig.ts"
import { JobsConfig } from "./JobsConfig.ts"
import { LimitsConfig } from "./LimitsConfig.ts"
import { SearchConfig } from "./SearchConfig.ts"
import { SecurityConfig } from "./SecurityConfig.ts"
import { ServerConfig } from "./ServerConfig.ts"
import type { Setting } from "./Setting.ts"
import { SpeechConfig } from "./SpeechConfig.ts"
import { StorageConfig } from "./StorageConfig.ts"

/** The areas in the order the table lists them. */
export const areas = [
  ServerConfig,
  DatabaseConfig,
  StorageConfig,
  SecurityConfig,
  LimitsConfig,
  SpeechConfig,
  JobsConfig,
  InsightsConfig,
  SearchConfig,
  BillingConfig
] as const

const settings: ReadonlyArray<Setting<unknown>> = areas.flatMap((area) => Object.values(area.fields))

/** Every variable this process reads, from the area declarations. */
export const knownVariables: ReadonlyArray<string> = settings.map((setting) => setting.env)

/**
 * Variables the README documents for clients (curl examples, the typed client): a shell that
 * follows the quick start exports them and then runs `npm start` or the admin CLI, so the
 * strict check passes them by. The server never reads them.
 */
export const clientVariables: ReadonlyArray<string> = ["VERBATIM_KEY"]

export class UnknownConfigVariable extends Schema.TaggedError<UnknownConfigVariable>()("UnknownConfigVariable", {
  names: Schema.Array(Schema.String)
}) {
  override get message() {
    return `Unknown configuration variable${this.names.length > 1 ? "s" : ""} ${this.names.join(", ")}: ` +
      `see the README's configuration table for the settings Verbatim reads.`
  }
}

/** Walks the provider's `VERBATIM` subtree (the env provider splits names on `_`). */
const verbatimVariables = Effect.gen(function*() {
  const provider = yield* ConfigProvider.ConfigProvider
  const found: Array<string> = []
  const walk = (path: ReadonlyArray<string>): Effect.Effect<void, ConfigProvider.SourceError> =>
    Effect.flatMap(provider.load(path), (node) => {
      if (node === undefined) return Effect.void
      if (node._tag === "Value") {
        found.push(path.join("_"))
        return Effect.void
      }
      if (node.value !== undefined) found.push(path.join("_"))
      if (node._tag === "Record") return Effect.forEach(node.keys, (key) => walk([...path, key]), { discard: true })
      return Effect.void
    })
  yield* walk(["VERBATIM"])
  return found
})

/** Fails with `UnknownConfigVariable` when the environment holds a `VERBATIM_*` name no area declares. */
export const refuseUnknownVariables = Effect.gen(function*() {
  const names = yield* verbatimVariables.pipe(Effect.orElseSucceed(() => []))
  const unknown = names.filter((name) => !knownVariables.includes(name) && !clientVariables.includes(name))
  if (unknown.length > 0) return yield* new UnknownConfigVariable({ names: unknown })
})

/**
 * Every area from the environment, after the unknown-name check; fails naming the offending
 * variable. Lists the same areas as `areas` (a tuple spread would lose each area's type).
 */
export const layer = Layer.mergeAll(
  ServerConfig.layer,
  DatabaseConfig.layer,
  StorageConfig.layer,
  SecurityConfig.layer,
  LimitsConfig.layer,
  SpeechConfig.layer,
  JobsConfig.layer,
  InsightsConfig.layer,
  SearchConfig.layer,
  BillingConfig.layer
).pipe(Layer.provide(Layer.effectDiscard(refuseUnknownVariables)))

/** Every configuration service: what `layer` provides. */
export type Configuration = Layer.Success<typeof layer>

/** The README's configuration table (markdown), one row per setting in area order. */
export const configurationTable = (): string =>
  [
    "| variable | default | meaning |",
    "|---|---|---|",
    ...settings.map((setting) => `| \`${setting.env}\` | ${setting.shown} | ${setting.doc} |`)
  ].join("\n")
