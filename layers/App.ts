/**
 * Composition root of a Verbatim process: configuration → storage → domain services →
 * HTTP server. `npm start` runs `AppLayer` with configuration from the environment;
 * tests build the same layer with `AppConfig.layerWith(...)` in place of the environment.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import { createServer } from "node:http"
import { Accounts } from "../services/Accounts.ts"
import { ApiKeys } from "../services/ApiKeys.ts"
import { AppConfig } from "../services/AppConfig.ts"
import { AppLogger } from "../services/observability/AppLogger.ts"
import { Ledger } from "../services/Ledger.ts"
import { RateLimiter } from "../services/RateLimiter.ts"
import { SampleQuota } from "../services/SampleQuota.ts"
import { Api } from "../src/api/Api.ts"
import { AccountHandlers, SystemHandlers } from "../src/handlers/AccountHandlers.ts"
import { AllowGuestLive, RequireAccountLive } from "../src/handlers/Auth.ts"
import { EdgeMiddleware } from "../src/handlers/Edge.ts"
import { DatabaseLayer } from "./Database.ts"

/** Storage plus the domain services every entry point (server, admin CLI) needs. */
export const DomainLayer = Layer.mergeAll(
  Accounts.layer,
  ApiKeys.layer,
  RateLimiter.layer,
  SampleQuota.layer,
  Ledger.layer
).pipe(Layer.provideMerge(DatabaseLayer))

const ApiRoutes = HttpApiBuilder.layer(Api, { openapiPath: "/openapi.json" }).pipe(
  Layer.provide([AccountHandlers, SystemHandlers]),
  Layer.provide([RequireAccountLive, AllowGuestLive])
)

const Routes = Layer.mergeAll(ApiRoutes, HttpApiScalar.layer(Api, { path: "/docs" }), EdgeMiddleware)

const HttpServerLayer = Layer.unwrap(
  AppConfig.useSync((config) => NodeHttpServer.layer(createServer, { port: config.port, host: config.host }))
)

/** The HTTP service on top of the domain; requires `AppConfig` and `AppLogger`. */
export const ServerLayer = HttpRouter.serve(Routes, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provideMerge(HttpServerLayer),
  Layer.provide(DomainLayer),
  Layer.provide(AppLogger.effectLogger)
)

/** Logs the bound address (the real port when configured as 0) once the server is up. */
export const announce = Effect.gen(function*() {
  const logger = yield* AppLogger
  const server = yield* HttpServer.HttpServer
  logger.pino.info({ msg: "listening", url: HttpServer.formatAddress(server.address), docs: "/docs" })
})
