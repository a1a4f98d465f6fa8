/**
 * The task engine alone, in-process, on the test file's own storage (embedded PGlite, or
 * Postgres with socket runners when VERBATIM_TEST_DATABASE_URL is set): the same
 * `WorkClusterLayer` the app composes, with the handlers and event consumers a test
 * registers. `restart` closes everything (as a clean stop) and builds it again on the
 * same storage. No feed loop runs: tests call `JobEventFeed.pass` themselves.
 */
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { clusterOptionsFrom, WorkClusterLayer } from "../../../layers/Cluster.ts"
import { DatabaseLayer } from "../../../layers/Database.ts"
import { DatabaseConfig } from "../../../services/config/DatabaseConfig.ts"
import { configLayerWith } from "../../support/config.ts"
import { type JobEventConsumer, JobEventFeed } from "../../../services/work/JobEventFeed.ts"
import { JobEventLog } from "../../../services/work/JobEventLog.ts"
import { TaskHandlers } from "../../../services/work/TaskHandlers.ts"
import type { TaskHandler } from "../../../services/work/TaskKind.ts"
import type { TaskEngineOptions } from "../../../services/work/TaskRunner.ts"
import { TaskStore } from "../../../services/work/TaskStore.ts"
import { makeTestStorage, type TestStorage } from "../../support/database.ts"
import { freePort } from "../../support/ports.ts"

export interface EngineOptions {
  readonly handlers: ReadonlyArray<TaskHandler>
  readonly consumers?: ReadonlyArray<JobEventConsumer>
  /** The engine's own options (the app's type); the backoff defaults to 200 ms here. */
  readonly engine?: TaskEngineOptions
}

const buildLayer = (storage: TestStorage, runnerPort: number, options: EngineOptions) => {
  const config = configLayerWith({
    dataDir: storage.dataDir,
    databaseUrl: storage.databaseUrl,
    runnerHost: "127.0.0.1",
    runnerPort
  })
  const engine = Layer.unwrap(
    Effect.map(DatabaseConfig, (shape) =>
      WorkClusterLayer(
        {
          ...clusterOptionsFrom(shape),
          engine: { backoff: "200 millis", ...options.engine }
        },
        Layer.succeed(TaskHandlers, TaskHandlers.make(options.handlers))
      ))
  )
  const consumers = (options.consumers ?? []).map((consumer) => Effect.succeed(consumer))
  return JobEventFeed.layer(...consumers).pipe(
    Layer.provideMerge(engine),
    Layer.provideMerge(Layer.mergeAll(TaskStore.layer, JobEventLog.layer)),
    Layer.provideMerge(DatabaseLayer),
    Layer.provideMerge(config)
  )
}

type Services = Layer.Success<ReturnType<typeof buildLayer>>

export interface Engine {
  run<A, E>(effect: Effect.Effect<A, E, Services>): Promise<A>
  restart(): Promise<void>
  close(): Promise<void>
}

export const startEngine = async (label: string, options: EngineOptions): Promise<Engine> => {
  const storage = await makeTestStorage(label)
  const runnerPort = await freePort()
  let scope = Effect.runSync(Scope.make())
  let context: Context.Context<Services>
  const build = async () => {
    scope = Effect.runSync(Scope.make())
    context = await Effect.runPromise(Layer.buildWithScope(buildLayer(storage, runnerPort, options), scope))
  }
  await build()
  const stop = () => Effect.runPromise(Scope.close(scope, Exit.void))
  return {
    run: (effect) => Effect.runPromise(Effect.provideContext(effect, context)),
    restart: async () => {
      await stop()
      await build()
    },
    close: async () => {
      await stop()
      await storage.dispose()
    }
  }
}
