/**
 * Durable execution: the effect/cluster runtime under the task engine's `Task` entity
 * (services/work), with the registered task kinds. The caller passes options (see `clusterOptionsFrom` for the
 * mapping from `DatabaseConfig`); nothing here reads the environment itself.
 *
 * Two shapes, decided by the storage:
 * - `single` (embedded PGlite: one process owns the database): `SingleRunner` with runner
 *   state in memory and messages in SQL on the app's SqlClient. The embedded client is a
 *   pool of one over PGlite's unix socket; the message storage only runs short statements
 *   and transactions on it, and no shard locks are taken in SQL at all (memory runner
 *   storage), so the single connection is never held across a wait.
 * - `socket` (Postgres, one or more processes): runners talk to each other over TCP at
 *   `runnerHost:runnerPort` (each process its own; fed by `VERBATIM_RUNNER_HOST` /
 *   `VERBATIM_RUNNER_PORT`), shards are locked with Postgres advisory locks and the runner
 *   table in the same database.
 *
 * Who runs a task is not decided by the shards: every runner claims due tasks from the task
 * table while it has a free slot (services/work/TaskRunner.ts), and the `Task` entity's
 * message only wakes the shard's owner to claim at once. A runner that vanished without
 * saying goodbye (kill -9, lost network) keeps its running tasks until their lease expires
 * (10 s without a beat; measured take-over ~10-20 s with the 1 s poll); a clean shutdown
 * gives them back at once. Shard lock expiration (socket mode, default 12 s) now only decides
 * how long the vanished runner's wake-up messages wait for another owner; every runner
 * refreshes its locks every expiration / 3, so it also sets the idle lock traffic.
 *
 * Gotcha: `SingleRunner.layer` and `NodeClusterSocket.layer` always load `ShardingConfig`
 * from the process environment (unprefixed names such as `HOST`, `PORT`, `SHARDS_PER_GROUP`)
 * and lay the options over it. Every field is passed explicitly below so no stray variable
 * changes behaviour; a malformed one (say `PORT=abc`) still fails start-up with a
 * ConfigError.
 */
import { NodeClusterSocket, NodeCrypto } from "@effect/platform-node"
import { type Duration, Layer, Option } from "effect"
import { RunnerAddress, ShardingConfig, SingleRunner } from "effect/cluster"
import type { DatabaseConfig } from "../services/config/DatabaseConfig.ts"
import { TaskEntityLayer } from "../services/work/TaskEntity.ts"
import type { TaskHandlers } from "../services/work/TaskHandlers.ts"
import { type TaskEngineOptions, TaskRunner } from "../services/work/TaskRunner.ts"
import { Tasks } from "../services/work/Tasks.ts"
import { TaskSupervisor } from "../services/work/TaskSupervisor.ts"

export type RunnerOptions =
  | { readonly mode: "single" }
  | {
    readonly mode: "socket"
    /** Address other runners reach this process at. */
    readonly runnerHost: string
    readonly runnerPort: number
    /** Interface to bind (e.g. "0.0.0.0" in a container); defaults to `runnerHost`. */
    readonly listenHost?: string | undefined
    /** Default 12 seconds; see the module comment for the trade-off. */
    readonly shardLockExpiration?: Duration.Input | undefined
  }

export type ClusterOptions = RunnerOptions & {
  /** Attempt cap and backoff (defaults: 3 attempts, 2 s doubling). */
  readonly engine?: TaskEngineOptions | undefined
}

/** Embedded storage → one runner; Postgres → socket runner at the configured address. */
export const clusterOptionsFrom = (config: DatabaseConfig["Service"]): ClusterOptions =>
  Option.isSome(config.databaseUrl)
    ? { mode: "socket", runnerHost: config.runnerHost, runnerPort: config.runnerPort }
    : { mode: "single" }

const shardingConfig = (options: RunnerOptions): ShardingConfig.ShardingConfig["Service"] => {
  const base: ShardingConfig.ShardingConfig["Service"] = {
    ...ShardingConfig.defaults,
    // Stored messages whose notification was missed (sent while no runner owned the
    // shard) wait at most this long.
    entityMessagePollInterval: "5 seconds"
  }
  if (options.mode === "single") return base
  const address = RunnerAddress.make(options.runnerHost, options.runnerPort)
  return {
    ...base,
    runnerAddress: Option.some(address),
    runnerListenAddress: options.listenHost === undefined
      ? Option.none()
      : Option.some(RunnerAddress.make(options.listenHost, options.runnerPort)),
    shardLockExpiration: options.shardLockExpiration ?? "12 seconds",
    // A runner that stops answering pings is dropped before its lock expires.
    runnerHealthCheckInterval: "10 seconds"
  }
}

/** The cluster runtime alone: `Sharding` (+ `Runners`, `MessageStorage`) on the SqlClient. */
export const ClusterRuntimeLayer = (options: RunnerOptions) =>
  options.mode === "single"
    ? SingleRunner.layer({ runnerStorage: "memory", shardingConfig: shardingConfig(options) }).pipe(
      Layer.provide(NodeCrypto.layerDigest)
    )
    : NodeClusterSocket.layer({ storage: "sql", shardingConfig: shardingConfig(options) })

/**
 * The task engine on this process: the runner claiming due tasks of the registered kinds
 * (each within its concurrency; it finds unfinished tasks at start by itself), the `Task` entity
 * that wakes it, the stall/time-limit supervisor and `Tasks` for enqueueing. `handlers` registers the kinds; it may itself need
 * `Tasks` (to enqueue follow-ups). Needs `TaskStore` and the migrated SqlClient (the
 * cluster creates its own `cluster_*` tables on first start).
 */
export const WorkClusterLayer = <E, R>(options: ClusterOptions, handlers: Layer.Layer<TaskHandlers, E, R>) => {
  const tasks = Tasks.layer.pipe(Layer.provideMerge(ClusterRuntimeLayer(options)))
  const engine = Layer.mergeAll(TaskEntityLayer, TaskSupervisor.layer).pipe(
    // Embedded storage has one process: a task still `running` at start was left by a dead one.
    Layer.provideMerge(TaskRunner.layer({ ...options.engine, orphanRunningAtStart: options.mode === "single" })),
    Layer.provideMerge(handlers)
  )
  return engine.pipe(Layer.provideMerge(tasks))
}
