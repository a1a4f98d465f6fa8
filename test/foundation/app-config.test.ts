/**
 * The strict configuration check (services/AppConfig.ts): an unknown `VERBATIM_*` variable stops
 * the process naming it, but the variables the README tells a user to export for clients
 * (`VERBATIM_KEY`) do not: the quick start exports it and then runs the admin CLI in that shell.
 */
import { assert, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer } from "effect"
import { AppConfig } from "../../services/AppConfig.ts"

const load = (env: Record<string, string>) =>
  Effect.exit(Layer.build(AppConfig.layer).pipe(
    Effect.scoped,
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
  ))

it.effect("refuses an unknown VERBATIM_* variable, naming it", () =>
  Effect.gen(function*() {
    const exit = yield* load({ VERBATIM_PROT: "8080" })
    assert.isTrue(Exit.isFailure(exit))
    assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "VERBATIM_PROT")
  }))

it.effect("accepts the client's VERBATIM_KEY from the README's quick start", () =>
  Effect.gen(function*() {
    const exit = yield* load({ VERBATIM_KEY: "vb_example", VERBATIM_PORT: "9090" })
    assert.isTrue(Exit.isSuccess(exit), String(Exit.isFailure(exit) ? exit.cause : ""))
  }))
