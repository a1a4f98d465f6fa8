/** The HTTP server: where it listens, how it names itself, its logs, metrics and shutdown. */
import { Config } from "effect"
import * as Setting from "./Setting.ts"
import { port, positiveInt, url } from "./readers.ts"

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "silent"

const fields = {
  host: Setting.setting({
    env: "VERBATIM_HOST",
    read: Config.String,
    fallback: "127.0.0.1",
    doc: "address to listen on (`0.0.0.0` to accept remote clients)"
  }),
  port: Setting.setting({
    env: "VERBATIM_PORT",
    read: port(0),
    fallback: 8080,
    doc: "port; `0` picks a free one (logged as `listening`)"
  }),
  publicUrl: Setting.optional({
    env: "VERBATIM_PUBLIC_URL",
    read: url,
    shown: "`http://HOST:PORT`",
    doc: "base URL clients use to reach this service (used in links it hands out)"
  }),
  trustProxy: Setting.setting({
    env: "VERBATIM_TRUST_PROXY",
    read: Config.Boolean,
    fallback: false,
    doc: "take the client address from the first `X-Forwarded-For` hop (only behind a proxy you trust)"
  }),
  logLevel: Setting.setting<LogLevel>({
    env: "VERBATIM_LOG_LEVEL",
    read: (env) => Config.Literals(["trace", "debug", "info", "warn", "error", "silent"], env),
    fallback: "info",
    doc: "`trace`, `debug`, `info`, `warn`, `error`, `silent`"
  }),
  metrics: Setting.setting({
    env: "VERBATIM_METRICS",
    read: Config.Boolean,
    fallback: true,
    doc: "serve `/metrics` (Prometheus text, no key); `false` turns it off"
  }),
  metricsPort: Setting.optional({
    env: "VERBATIM_METRICS_PORT",
    read: port(0),
    doc: "serve `/metrics` only on this port (unset: on the API port)"
  }),
  shutdownGraceSeconds: Setting.setting({
    env: "VERBATIM_SHUTDOWN_GRACE_SECONDS",
    read: positiveInt,
    fallback: 20,
    doc: "on SIGTERM, how long in-flight requests may finish before running jobs are handed back"
  })
}

export class ServerConfig extends Setting.Area<ServerConfig>()("verbatim/config/ServerConfig", fields) {}
