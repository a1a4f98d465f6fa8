/**
 * The `verbatim` command: `serve` runs the HTTP service (what `npm start` does),
 * `admin …` manages accounts and keys. Configuration comes from the environment
 * (README, "Configuration"); an invalid setting stops the process with a message
 * naming the variable.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { Command } from "effect/cli"
import { announce, DomainLayer, SearchReindexLayer, ServerLayer } from "../layers/App.ts"
import { ModelRegistryLayer, PipelineLayer } from "../layers/Pipeline.ts"
import { AppConfig } from "../services/AppConfig.ts"
import { AppLogger } from "../services/observability/AppLogger.ts"
import { adminCommand } from "./cli/AdminCommands.ts"
import { speechCommands } from "./cli/SpeechCommands.ts"

const serve = Command.make(
  "serve",
  {},
  () =>
    Layer.launch(
      Layer.effectDiscard(announce).pipe(
        Layer.provideMerge(ServerLayer),
        Layer.provide(PipelineLayer),
        Layer.provide(AppLogger.layer)
      )
    )
).pipe(Command.withDescription("Run the HTTP API (embedded PGlite unless DATABASE_URL is set)"))

const verbatim = Command.make("verbatim").pipe(
  Command.withDescription("Verbatim: self-hosted transcription service"),
  Command.withSubcommands([serve, adminCommand.pipe(Command.provide(SearchReindexLayer), Command.provide(DomainLayer)), ...speechCommands({ pipeline: PipelineLayer, models: ModelRegistryLayer })])
)

/** A failure's one-line explanation for the operator. */
const describe = (error: unknown): string => {
  const tagged = error as { readonly _tag?: string; readonly message?: string; readonly cause?: unknown }
  if (tagged._tag === "ConfigError") return `invalid configuration: ${String(tagged.cause)}`
  if (tagged._tag === "ServeError") return `the HTTP server could not start: ${String(tagged.cause)}`
  if (tagged._tag === "SocketServerError") {
    return `the job runner could not listen (VERBATIM_RUNNER_HOST / VERBATIM_RUNNER_PORT; each process needs its own port): ${
      String(tagged.cause)
    }`
  }
  if (tagged.message) return tagged.message
  if (tagged.cause !== undefined) return `${tagged._tag ?? "error"}: ${String(tagged.cause)}`
  return String(error)
}

/** Failures reach the operator as one sentence on stderr and exit code 1. */
const reportFailure = (error: unknown) =>
  Console.error(`verbatim: ${describe(error)}`).pipe(
    Effect.andThen(Effect.sync(() => {
      process.exitCode = 1
    }))
  )

verbatim.pipe(
  Command.run({ version: "0.1.0" }),
  Effect.provide(AppConfig.layer),
  Effect.catch(reportFailure),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)
