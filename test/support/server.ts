/**
 * Starts the real service in-process on 127.0.0.1 with an OS-assigned port, over real
 * sockets, on the test file's own storage. Requests go through `fetch`.
 */
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpServer } from "effect/http"
import pino from "pino"
import { freePort } from "./ports.ts"
import { DomainLayer, ServerLayer, type WorkLayer } from "../../layers/App.ts"
import { PipelineLayer } from "../../layers/Pipeline.ts"
import type { MediaDecoder } from "../../pipeline/media/MediaDecoder.ts"
import type { Transcriber } from "../../pipeline/Transcriber.ts"
import { modelsDir } from "./paths.ts"
import { Accounts } from "../../services/Accounts.ts"
import { Billing } from "../../services/billing/Billing.ts"
import { ApiKeys } from "../../services/ApiKeys.ts"
import type { Configuration } from "../../services/config/Configuration.ts"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { AppLogger } from "../../services/observability/AppLogger.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import { type AllSettings, configLayerWith } from "./config.ts"
import { makeTestStorage, type TestStorage } from "./database.ts"

export interface TestServer {
  readonly url: string
  readonly storage: TestStorage
  /** Every JSON log line the server wrote. */
  readonly logs: Array<string>
  run<A, E>(effect: Effect.Effect<A, E, DomainServices>): Promise<A>
  /**
   * A new account with API access and one key; returns the plaintext key. Funded with
   * 10,000 minutes unless `minutes` says otherwise (billing tests start from 0).
   */
  account(email?: string, options?: { readonly minutes?: number }): Promise<{ readonly key: string; readonly email: string; readonly accountId: AccountId }>
  get(path: string, headers?: Record<string, string>): Promise<Response>
  close(): Promise<void>
}

/** Everything a test may reach inside the running server: domain services and config. */
export type DomainServices = Layer.Success<typeof DomainLayer> | Layer.Success<typeof WorkLayer> | Configuration

let accountCounter = 0


export interface StartOptions {
  /**
   * The speech pipeline. Default: the real one (models load on first use). Tests about job
   * lifecycle may pass a stand-in Transcriber here — that boundary is not what they test.
   */
  readonly pipeline?: Layer.Layer<Transcriber | MediaDecoder, never, Configuration>
}

export const startServer = async (
  label: string,
  overrides: Partial<AllSettings> = {},
  options: StartOptions = {}
): Promise<TestServer> => {
  const storage = await makeTestStorage(label)
  const logs: Array<string> = []
  const destination = { write: (line: string) => void logs.push(line) }
  const config = configLayerWith({
    host: "127.0.0.1",
    port: 0,
    dataDir: storage.dataDir,
    databaseUrl: storage.databaseUrl,
    logLevel: "info",
    runnerPort: await freePort(),
    // Tests poll jobs faster than clients may; the rate-limit tests set the real figures.
    rateLimitPerMinute: 6000,
    modelsDir: modelsDir,
    model: "whisper-tiny.en",
    decoder: "wasm",
    ...overrides
  })
  const layer = Layer.mergeAll(ServerLayer, DomainLayer).pipe(
    Layer.provide(options.pipeline ?? PipelineLayer),
    Layer.provide(Layer.effect(AppLogger, ServerConfig.useSync((c) => AppLogger.make(c.logLevel, destination as pino.DestinationStream)))),
    Layer.provideMerge(config)
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const server = Context.get(context, HttpServer.HttpServer)
  const url = HttpServer.formatAddress(server.address)
  const run = <A, E>(effect: Effect.Effect<A, E, DomainServices>) =>
    Effect.runPromise(Effect.provideContext(effect, context as never))
  return {
    url,
    storage,
    logs,
    run,
    account: (email, accountOptions = {}) =>
      run(Effect.gen(function*() {
        const address = email ?? `user${++accountCounter}-${Date.now()}@example.com`
        const accounts = yield* Accounts
        const account = yield* accounts.create(address)
        yield* accounts.grantApiAccess(account.id)
        const minutes = accountOptions.minutes ?? 10_000
        if (minutes > 0) yield* (yield* Billing).grant(account.id, minutes, "test funding")
        const issued = yield* (yield* ApiKeys).create(account.id)
        return { key: issued.key, email: account.email, accountId: account.id }
      })),
    get: (path, headers = {}) => fetch(url + path, { headers }),
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await storage.dispose()
    }
  }
}
