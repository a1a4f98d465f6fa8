/**
 * The `verbatim` command: `serve` runs the HTTP service (what `npm start` does),
 * `admin …` manages accounts and keys. Configuration comes from the environment
 * (README, "Configuration"); an invalid setting stops the process with a message
 * naming the variable.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { Command } from "effect/cli"
import { announce, DomainLayer, ServerLayer } from "../layers/App.ts"
import { AppConfig } from "../services/AppConfig.ts"
import { adminCommand } from "./cli/AdminCommands.ts"

const serve = Command.make(
  "serve",
  {},
  () => Layer.launch(Layer.effectDiscard(announce).pipe(Layer.provideMerge(ServerLayer)))
).pipe(Command.withDescription("Run the HTTP API (embedded PGlite unless DATABASE_URL is set)"))

const verbatim = Command.make("verbatim").pipe(
  Command.withDescription("Verbatim: self-hosted transcription service"),
  Command.withSubcommands([serve, adminCommand.pipe(Command.provide(DomainLayer))])
)

/** Domain failures reach the operator as one sentence on stderr and exit code 1. */
const reportFailure = (error: unknown) =>
  Console.error(`verbatim: ${error instanceof Error ? error.message : String(error)}`).pipe(
    Effect.andThen(Effect.sync(() => {
      process.exitCode = 1
    }))
  )

verbatim.pipe(
  Command.run({ version: "0.1.0" }),
  Effect.catch(reportFailure),
  Effect.provide(AppConfig.layer),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)
