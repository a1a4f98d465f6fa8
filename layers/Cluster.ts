/**
 * Durable job execution: the effect/cluster runtime under the `Job` entity, the dispatcher
 * and the start-up reconciler. The caller passes options (see `clusterOptionsFrom` for the
 * mapping from `AppConfig`); nothing here reads the environment itself.
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
 * Shard lock expiration (socket mode, default 12 s) is how long a runner that vanished
 * without saying goodbye (kill -9, lost network) keeps its shards: its runner row drops out
 * of the live set after that, the survivors re-balance on their next refresh (3 s) and pick
 * its stored messages up. Shorter means faster take-over, but a runner whose database round
 * trips stall for longer than that (GC pause, overloaded Postgres, network blip) loses its
 * shards and its running jobs are interrupted and started again elsewhere; every runner
 * refreshes its locks every expiration / 3, so it also sets the idle lock traffic. A clean
 * shutdown hands shards over at once regardless.
 *
 * Gotcha: `SingleRunner.layer` and `NodeClusterSocket.layer` always load `ShardingConfig`
 * from the process environment (unprefixed names such as `HOST`, `PORT`, `SHARDS_PER_GROUP`)
 * and lay the options over it. Every field is passed explicitly below so no stray variable
 * changes behaviour; a malformed one (say `PORT=abc`) still fails start-up with a
 * ConfigError.
 */
import { NodeClusterSocket, NodeCrypto } from "@effect/platform-node"
import { type Duration, Layer, Option } from "effect"
import { type MessageStorage, RunnerAddress, type Runners, type Sharding, ShardingConfig, SingleRunner } from "effect/cluster"
import type { ConfigError } from "effect/Config"
import type { SocketServerError } from "effect/socket/SocketServer"
import type { SqlClient } from "effect/sql"
import type { AppConfigShape } from "../services/AppConfig.ts"
import { JobDispatcher, JobReconciler } from "../services/jobs/JobDispatcher.ts"
import { JobEntityLayer } from "../services/jobs/JobEntity.ts"
import type { JobProcessor, UnfinishedJobs } from "../services/jobs/JobProcessor.ts"
import { WorkerPool } from "../services/jobs/WorkerPool.ts"

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
  /** Jobs run at once by this process. */
  readonly poolSize: number
}

/** Embedded storage → one runner; Postgres → socket runner at the configured address. */
export const clusterOptionsFrom = (config: AppConfigShape): ClusterOptions =>
  Option.isSome(config.databaseUrl)
    ? { mode: "socket", runnerHost: config.runnerHost, runnerPort: config.runnerPort, poolSize: config.workers }
    : { mode: "single", poolSize: config.workers }

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
export const ClusterRuntimeLayer = (
  options: RunnerOptions
): Layer.Layer<
  Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage,
  ConfigError | SocketServerError,
  SqlClient.SqlClient
> =>
  options.mode === "single"
    ? SingleRunner.layer({ runnerStorage: "memory", shardingConfig: shardingConfig(options) }).pipe(
      Layer.provide(NodeCrypto.layerDigest)
    )
    : NodeClusterSocket.layer({ storage: "sql", shardingConfig: shardingConfig(options) })

/**
 * Runs the `Job` entity on this process, provides `JobDispatcher`, and dispatches the
 * unfinished jobs once at start. Needs the app's `JobProcessor`, `UnfinishedJobs` and
 * SqlClient (migrated: the cluster creates its own `cluster_*` tables on first start).
 */
export const JobsClusterLayer = (
  options: ClusterOptions
): Layer.Layer<
  JobDispatcher,
  ConfigError | SocketServerError,
  JobProcessor | UnfinishedJobs | SqlClient.SqlClient
> =>
  Layer.mergeAll(JobEntityLayer, JobReconciler).pipe(
    Layer.provideMerge(JobDispatcher.layer),
    Layer.provide(WorkerPool.layer({ size: options.poolSize })),
    Layer.provide(ClusterRuntimeLayer(options))
  )
