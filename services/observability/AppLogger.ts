/**
 * JSON logs through pino, one format for every line the server writes: pino's numeric `level`,
 * `time`, `service` once, `msg`, then the line's fields. Request logs carry method, path (never
 * the query string, which may hold a signed token), status, duration and the account id — never
 * a key or a claim token. Effect's own log calls are routed to the same pino instance; the few
 * lines written outside the layers (the shutdown signal) go through `AppLogger.direct`.
 */
import { Cause, Context, Effect, Layer, Logger, Option, Redacted, References } from "effect"
import { spawnSync } from "node:child_process"
import pino from "pino"
import type { DatabaseConfig } from "../config/DatabaseConfig.ts"
import { type LogLevel, ServerConfig } from "../config/ServerConfig.ts"
import type { SpeechConfig } from "../config/SpeechConfig.ts"
import type { StorageConfig } from "../config/StorageConfig.ts"

const safeJson = (value: unknown) => {
  try {
    return JSON.stringify(value)
  } catch {
    return String(value)
  }
}

/** Fields every line has; an annotation by one of these names is kept as `annotation_<name>`, never repeated. */
const lineKeys = new Set(["level", "time", "service", "msg"])

const options = (level: LogLevel): pino.LoggerOptions => ({ level, base: { service: "verbatim" } })

/** A database URL without its password (and query string), for the log. */
type StartupSettings =
  & Pick<SpeechConfig["Service"], "model" | "encoder" | "decoder" | "workers">
  & Pick<DatabaseConfig["Service"], "databaseUrl">
  & Pick<StorageConfig["Service"], "dataDir">

const databaseForLog = (config: Pick<StartupSettings, "databaseUrl" | "dataDir">): string =>
  Option.match(config.databaseUrl, {
    onNone: () => `embedded PGlite in ${config.dataDir}/pg`,
    onSome: (secret) => {
      try {
        const url = new URL(Redacted.value(secret))
        return `postgres ${url.username === "" ? "" : `${decodeURIComponent(url.username)}@`}${url.host}${url.pathname}`
      } catch {
        return "postgres (DATABASE_URL)"
      }
    }
  })

/**
 * What this server runs on, for its start-up line: the Whisper model and encoder setting, the
 * ffmpeg build that decodes (`auto` resolved by the same test as pipeline/media/MediaDecoder.ts:
 * `ffmpeg -version` runs), and the database, never its password.
 */
export const startupFields = (config: StartupSettings) => ({
  model: config.model,
  encoder: config.encoder,
  decoder: config.decoder !== "auto"
    ? config.decoder
    : spawnSync("ffmpeg", ["-hide_banner", "-version"], { stdio: "ignore", timeout: 10_000 }).status === 0
    ? "native"
    : "wasm",
  database: databaseForLog(config),
  workers: config.workers
})

export interface RequestLogEntry {
  readonly request_id: string
  readonly method: string
  readonly path: string
  readonly status: number
  readonly ms: number
  readonly account_id: string | null
}

export class AppLogger extends Context.Service<AppLogger, {
  readonly pino: pino.Logger
  request(entry: RequestLogEntry): void
}>()("verbatim/observability/AppLogger") {
  static readonly make = (level: LogLevel, destination?: pino.DestinationStream) => {
    const logger = pino(options(level), destination ?? pino.destination(1))
    return AppLogger.of({
      pino: logger,
      request: (entry) => logger.info({ msg: "request", ...entry })
    })
  }

  /**
   * A logger writing each line at once to stdout, in the same format, for the few lines written
   * outside the layers (a signal handler), where nothing flushes a buffer afterwards.
   */
  static readonly direct = (level: LogLevel, dest: number | string = 1): pino.Logger =>
    pino(options(level), pino.destination({ dest, sync: true }))

  /**
   * Lines to `dest` (default stdout) gathered up to `bufferBytes` per write, and written at least
   * every `flushEveryMs`: one write per request line cost a system call (and a thread-pool
   * wake-up) on the event loop. A line waits at most `flushEveryMs`; the buffer is written out
   * synchronously when the scope closes and, by pino, when the process exits. Only a hard kill
   * (SIGKILL) can lose what is in the buffer, at most `flushEveryMs` of lines.
   */
  static readonly buffered = (
    level: LogLevel,
    options: { readonly dest?: number | string; readonly bufferBytes?: number; readonly flushEveryMs?: number } = {}
  ) =>
    Effect.gen(function*() {
      const stream = pino.destination({ dest: options.dest ?? 1, minLength: options.bufferBytes ?? 4096, sync: false })
      // Set by sonic-boom once ended (pino ends it at process exit); missing from its typings.
      const ended = () => (stream as unknown as { readonly destroyed: boolean }).destroyed
      let pending = false
      const flush = () => {
        if (!pending || ended()) return
        pending = false
        stream.flush()
      }
      yield* Effect.acquireRelease(
        Effect.sync(() => setInterval(flush, options.flushEveryMs ?? 200).unref()),
        (timer) =>
          Effect.sync(() => {
            clearInterval(timer)
            if (!ended()) stream.flushSync()
          })
      )
      return AppLogger.make(level, {
        write: (line: string) => {
          pending = true
          stream.write(line)
        }
      })
    })

  static readonly layer = Layer.effect(
    AppLogger,
    ServerConfig.use((config) => AppLogger.buffered(config.logLevel))
  )

  /** Effect's `Effect.log*` calls written as pino JSON lines. */
  static readonly effectLogger = Layer.unwrap(
    AppLogger.useSync(({ pino: logger }) =>
      Logger.layer([
        Logger.make(({ cause, fiber, logLevel, message }) => {
          const parts = Array.isArray(message) ? message : [message]
          const text = parts.map((part) => typeof part === "string" ? part : safeJson(part)).join(" ")
          // `Effect.annotateLogs` fields become fields of the line (e.g. a task's job id, kind, outcome).
          const fields: Record<string, unknown> = {}
          for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) {
            fields[lineKeys.has(key) ? `annotation_${key}` : key] = value
          }
          const entry = cause.reasons.length > 0 ? { msg: text, ...fields, cause: Cause.pretty(cause) } : { msg: text, ...fields }
          switch (logLevel) {
            case "Fatal":
              return logger.fatal(entry)
            case "Error":
              return logger.error(entry)
            case "Warn":
              return logger.warn(entry)
            case "Debug":
              return logger.debug(entry)
            case "Trace":
              return logger.trace(entry)
            default:
              return logger.info(entry)
          }
        })
      ])
    )
  )
}
