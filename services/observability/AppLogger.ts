/**
 * JSON logs through pino. Request logs carry method, path (never the query string, which
 * may hold a signed token), status, duration and the account id — never a key or a claim
 * token. Effect's own log calls are routed to the same pino instance.
 */
import { Context, Layer, Logger } from "effect"
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

  static readonly layer = Layer.effect(
    AppLogger,
    AppConfig.useSync((config) => AppLogger.make(config.logLevel))
  )

  /** Effect's `Effect.log*` calls written as pino JSON lines. */
  static readonly effectLogger = Layer.unwrap(
    AppLogger.useSync(({ pino: logger }) =>
      Logger.layer([
        Logger.make(({ logLevel, message }) => {
          const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
          switch (logLevel) {
            case "Fatal":
              return logger.fatal(text)
            case "Error":
              return logger.error(text)
            case "Warn":
              return logger.warn(text)
            case "Debug":
              return logger.debug(text)
            case "Trace":
              return logger.trace(text)
            default:
              return logger.info(text)
          }
        })
      ])
    )
  )
}
