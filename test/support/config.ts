/**
 * Every configuration area for tests from one flat set of overrides: each key goes to the area
 * that declares it (field names are unique across areas, checked in app-config.test.ts), the
 * rest takes the defaults. The environment is not read.
 */
import { Layer } from "effect"
import { areas, type Configuration } from "../../services/config/Configuration.ts"
import type { Settings, Values } from "../../services/config/Setting.ts"

type AreaShape<A> = A extends { readonly fields: infer F extends Settings } ? Values<F> : never
type Intersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never

/** All settings of all areas, flat. */
export type AllSettings = Intersection<AreaShape<(typeof areas)[number]>>

interface AnyArea {
  readonly fields: Settings
  readonly layerWith: (overrides: Record<string, unknown>) => Layer.Layer<unknown>
}

export const configLayerWith = (overrides: Partial<AllSettings> = {}): Layer.Layer<Configuration> => {
  const given: Record<string, unknown> = overrides
  const layers = (areas as ReadonlyArray<AnyArea>).map((area) =>
    area.layerWith(Object.fromEntries(Object.keys(area.fields).filter((key) => key in given).map((key) => [key, given[key]])))
  )
  return Layer.mergeAll(...(layers as [Layer.Layer<unknown>])) as Layer.Layer<Configuration>
}
