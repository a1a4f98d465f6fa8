/**
 * One declaration per setting: its variable name, how it is read, its default and the line the
 * README's configuration table shows come from a single `setting(...)` / `optional(...)` call,
 * so an area file (services/config/*Config.ts) writes each of them once. The area's service
 * type, its `Config.all`, the known-variable list and the table are derived from these records.
 */
import { Config, ConfigProvider, Context, Effect, Layer, type Option, Record } from "effect"

export interface Setting<A> {
  /** The environment variable. */
  readonly env: string
  /** Reads and validates it (default applied), failing with an error naming `env`. */
  readonly config: Config.Config<A>
  /** The table's default column (markdown). */
  readonly shown: string
  /** The table's meaning column (markdown, one line). */
  readonly doc: string
}

/** A record of settings: one area. */
export type Settings = Record<string, Setting<any>>

/** The values an area's settings read to: the area service's shape. */
export type Values<F extends Settings> = { readonly [K in keyof F]: F[K] extends Setting<infer A> ? A : never }

const showValue = (value: unknown): string =>
  Array.isArray(value) ? (value.length === 0 ? "empty" : `\`${value.join(",")}\``) : `\`${String(value)}\``

/** A setting with a default; `shown` replaces the default's own text in the table (e.g. a derived value). */
export const setting = <A>(options: {
  readonly env: string
  readonly read: (env: string) => Config.Config<A>
  readonly fallback: NoInfer<A>
  readonly doc: string
  readonly shown?: string
}): Setting<A> => ({
  env: options.env,
  config: options.read(options.env).pipe(Config.withDefault(options.fallback)),
  shown: options.shown ?? showValue(options.fallback),
  doc: options.doc
})

/** A setting that may stay unset (`Option.none()`); `shown` says what unset means (default "unset"). */
export const optional = <A>(options: {
  readonly env: string
  readonly read: (env: string) => Config.Config<A>
  readonly doc: string
  readonly shown?: string
}): Setting<Option.Option<A>> => ({
  env: options.env,
  config: Config.option(options.read(options.env)),
  shown: options.shown ?? "unset",
  doc: options.doc
})

/** Reads every setting of an area from the ambient ConfigProvider (the environment in `layer`). */
export const read = <F extends Settings>(fields: F): Config.Config<Values<F>> =>
  Config.all(Record.map(fields, (field) => field.config)) as unknown as Config.Config<Values<F>>

/**
 * The base class of an area service: `class XConfig extends Setting.Area<XConfig>()("verbatim/config/XConfig", fields) {}`
 * gives the service with `fields` (for the known-variable list and the table), `layer` (the
 * environment, read once at the layer edge) and `layerWith(overrides)` (for tests and embedding: defaults, then the
 * overrides; the environment is not read).
 */
export const Area = <Self>() => <const Key extends string, F extends Settings>(key: Key, fields: F) =>
  class extends Context.Service<Self, Values<F>>()(key) {
    static readonly fields: F = fields
    static readonly layer: Layer.Layer<Self, Config.ConfigError> = Layer.effect(this, read(fields))
    static readonly layerWith = (overrides: Partial<Values<F>> = {}): Layer.Layer<Self> =>
      Layer.effect(
        this,
        read(fields).pipe(
          Effect.map((defaults) => ({ ...defaults, ...overrides })),
          Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({})),
          // Every setting has a default or is optional, so an empty provider cannot fail.
          Effect.orDie
        )
      )
  }
