/**
 * The `verbatim` command: `serve` runs the HTTP service (what `npm start` does),
 * `admin …` manages accounts and keys. Configuration comes from the environment
 * (README, "Configuration"); an invalid setting stops the process with a message
 * naming the variable.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Layer, Logger } from "effect"
import { Command } from "effect/cli"
import { FetchLayer, InsightsGeneratorLayer } from "../layers/Local.ts"
import { InProcessPipelineLayer, ModelRegistryLayer, PipelineLayer } from "../layers/Pipeline.ts"
import * as Configuration from "../services/config/Configuration.ts"
import { type LogLevel, ServerConfig } from "../services/config/ServerConfig.ts"
import { AppLogger } from "../services/observability/AppLogger.ts"
import { adminCommand } from "./cli/AdminCommands.ts"
import { speechCommands } from "./cli/SpeechCommands.ts"
import { doctorCommand } from "./cli/DoctorCommand.ts"

// The server's composition root and the database load only for the commands that use them:
// `verbatim transcribe` then starts without them (measured: 0.8 s of CPU and ~70 MB less).
const app = () => import("../layers/App.ts")
const lazy = <A, E, R>(load: () => Promise<Layer.Layer<A, E, R>>) => Layer.unwrap(Effect.promise(load))
const DomainLayer = lazy(() => app().then((m) => m.DomainLayer))
const SearchReindexLayer = lazy(() => app().then((m) => m.SearchReindexLayer))
const DatabaseLayer = lazy(() => import("../layers/Database.ts").then((m) => m.DatabaseLayer))

/**
 * SIGTERM (and SIGINT) interrupt the server's layers in reverse order: the HTTP server stops
 * accepting connections and lets in-flight requests finish for up to
 * `VERBATIM_SHUTDOWN_GRACE_SECONDS`; then the job runner stops, interrupting running jobs so
 * their persisted messages are delivered again (to another runner, or to this one after a
 * restart); then the database closes. Whatever is still running `grace + 10` seconds after
 * the signal is abandoned: the process exits with status 1.
 */
const boundShutdown = (graceSeconds: number, logLevel: LogLevel) =>
  Effect.sync(() => {
    const onSignal = (signal: NodeJS.Signals) => {
      AppLogger.direct(logLevel).info({ msg: "shutting down", signal, grace_seconds: graceSeconds })
      setTimeout(() => {
        process.stderr.write(`verbatim: shutdown took longer than ${graceSeconds + 10} s; exiting anyway\n`)
        process.exit(1)
      }, (graceSeconds + 10) * 1000).unref()
    }
    process.once("SIGTERM", onSignal)
    process.once("SIGINT", onSignal)
  })

const serve = Command.make(
  "serve",
  {},
  () =>
    Effect.andThen(
      ServerConfig.use((config) => boundShutdown(config.shutdownGraceSeconds, config.logLevel)),
      Layer.launch(
        lazy(() => app().then(({ announce, ServerLayer }) => Layer.effectDiscard(announce).pipe(Layer.provideMerge(ServerLayer)))).pipe(
          Layer.provide(PipelineLayer),
          Layer.provide(AppLogger.layer)
        )
      )
    )
).pipe(Command.withDescription("Run the HTTP API (embedded PGlite unless DATABASE_URL is set)"))

const verbatim = Command.make("verbatim").pipe(
  Command.withDescription("Verbatim: self-hosted transcription service"),
  // `transcribe` runs the pipeline on the CLI's own thread: there is no API to keep responsive,
  // and a worker thread would load the pipeline's modules a second time (measured on a 7 s clip:
  // 8.4 → 4–5 s of CPU, 705 → ~500 MB peak RSS) and run it at the server's lower priority.
  Command.withSubcommands([serve,
    adminCommand.pipe(Command.provide(SearchReindexLayer), Command.provide(DomainLayer)), ...speechCommands({ pipeline: InProcessPipelineLayer, insights: InsightsGeneratorLayer, links: FetchLayer, models: ModelRegistryLayer }),
    doctorCommand(DatabaseLayer).pipe(Command.provide(ModelRegistryLayer))
  ])
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

/** The command line itself was wrong (the help text was printed above the message). */
const usageErrors = new Set([
  "UnrecognizedOption",
  "DuplicateOption",
  "MissingOption",
  "MissingArgument",
  "UnexpectedArgument",
  "InvalidValue",
  "UnknownSubcommand",
  "ValidationError",
  "ShowHelp"
])

/**
 * Exit status: 0 done; 1 the command failed (one sentence on stderr; `doctor` and `transcribe`
 * also exit 1 when a check or an input failed); 2 the command line was wrong.
 */
const reportFailure = (error: unknown) => {
  const tag = (error as { readonly _tag?: string })._tag ?? ""
  return Console.error(`verbatim: ${usageErrors.has(tag) ? "invalid command line (see the help above)" : describe(error)}`).pipe(
    Effect.andThen(Effect.sync(() => {
      process.exitCode = usageErrors.has(tag) ? 2 : 1
    }))
  )
}

verbatim.pipe(
  Command.run({ version: "0.1.0" }),
  Effect.provide(Configuration.layer),
  // Effect's logger writes to stderr for every command: stdout carries only results (`admin`'s
  // JSON, `doctor --json`, a transcript), and opening the database may log on its own (a migration
  // rebuilding a large library's search index). `serve` logs through pino, to stdout, as before.
  Effect.provide(Layer.succeed(Logger.LogToStderr, true)),
  Effect.catch(reportFailure),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)
