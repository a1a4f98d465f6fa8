/**
 * JSON logs through pino. Request logs carry method, path (never the query string, which
 * may hold a signed token), status, duration and the account id — never a key or a claim
 * token. Effect's own log calls are routed to the same pino instance.
 */
import { Cause, Context, Effect, Layer, Logger, References } from "effect"

const safeJson = (value: unknown) => {
  try {
    return JSON.stringify(value)
  } catch {
    return String(value)
  }
}
import pino from "pino"
import { AppConfig, type LogLevel } from "../AppConfig.ts"

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
    const logger = pino({ level, base: { service: "verbatim" } }, destination ?? pino.destination(1))
    return AppLogger.of({
      pino: logger,
      request: (entry) => logger.info({ msg: "request", ...entry })
    })
  }

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
    AppConfig.use((config) => AppLogger.buffered(config.logLevel))
  )

  /** Effect's `Effect.log*` calls written as pino JSON lines. */
  static readonly effectLogger = Layer.unwrap(
    AppLogger.useSync(({ pino: logger }) =>
      Logger.layer([
        Logger.make(({ cause, fiber, logLevel, message }) => {
          const parts = Array.isArray(message) ? message : [message]
          const text = parts.map((part) => typeof part === "string" ? part : safeJson(part)).join(" ")
          // `Effect.annotateLogs` fields become fields of the line (e.g. a task's job id, kind, outcome).
          const fields = { ...fiber.getRef(References.CurrentLogAnnotations) }
          const entry = cause.reasons.length > 0 ? { ...fields, msg: text, cause: Cause.pretty(cause) } : { ...fields, msg: text }
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
