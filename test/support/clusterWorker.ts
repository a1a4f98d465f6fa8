/**
 * A worker process for the durable-jobs tests: the real storage and task engine composition
 * (configuration from the environment → DatabaseLayer → WorkClusterLayer(clusterOptionsFrom) +
 * JobDispatcher) around a stand-in `transcribe` task handler that works on a `test_jobs`
 * table instead of transcribing.
 *
 * Environment: the usual `VERBATIM_DATA_DIR` / `DATABASE_URL`, `VERBATIM_WORKERS` (pool size),
 * `VERBATIM_RUNNER_HOST` / `VERBATIM_RUNNER_PORT` (socket mode), plus `CLUSTER_TEST_WORKER`
 * (this worker's label, recorded on the jobs it works on), `CLUSTER_TEST_RECONCILE=off`
 * (no start-up reconciliation of unfinished jobs; unfinished tasks are found by the claims)
 * and `CLUSTER_TEST_BACKOFF_MS` (the engine's backoff before a second attempt).
 *
 * Protocol on stdio: prints `@@ready` once the runner is up; reads `dispatch <id>` (one
 * dispatch) or `dispatch2 <id>` (two at once) and prints `@@dispatched <id>` when they have
 * returned. Exits when stdin closes, so a crashed test never leaves a worker behind.
 *
 * The stand-in task run: records that it was entered (per job and per worker, with the
 * highest concurrency seen), claims the row unless it ended (`attempts + 1`), writes a
 * heartbeat every 200 ms for `duration_ms` (re-read at each heartbeat), then marks it done
 * (`completions + 1`) only if it is not done yet. A negative `duration_ms` makes it die
 * instead (a defect); the engine's `giveUp` marks the row `failed` with the reason.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Config, Effect, Layer, Schema, Stream } from "effect"
import { SqlClient } from "effect/sql"
import * as readline from "node:readline"
import { clusterOptionsFrom, WorkClusterLayer } from "../../layers/Cluster.ts"
import { DatabaseLayer } from "../../layers/Database.ts"
import * as Configuration from "../../services/config/Configuration.ts"
import { DatabaseConfig } from "../../services/config/DatabaseConfig.ts"
import { SpeechConfig } from "../../services/config/SpeechConfig.ts"
import { JobDispatcher, JobReconciler, UnfinishedJobs } from "../../services/jobs/JobDispatcher.ts"
import { TaskHandlers } from "../../services/work/TaskHandlers.ts"
import type { GiveUpReason, GivenUpTask, TaskHandler, TaskRun } from "../../services/work/TaskKind.ts"
import { TaskStore } from "../../services/work/TaskStore.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"

const TestTables = Layer.effectDiscard(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const label = yield* Config.String("CLUSTER_TEST_WORKER")
    // Several workers may start together on one Postgres: serialise the DDL.
    yield* Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(774411)`
      yield* sql`CREATE TABLE IF NOT EXISTS test_jobs (
        id uuid PRIMARY KEY,
        status text NOT NULL DEFAULT 'queued',
        duration_ms integer NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        completions integer NOT NULL DEFAULT 0,
        invocations integer NOT NULL DEFAULT 0,
        running integer NOT NULL DEFAULT 0,
        max_running integer NOT NULL DEFAULT 0,
        processed_by text,
        finished_by text,
        gave_up text,
        heartbeat_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`
      yield* sql`CREATE TABLE IF NOT EXISTS test_workers (
        label text PRIMARY KEY,
        running integer NOT NULL DEFAULT 0,
        max_running integer NOT NULL DEFAULT 0
      )`
      yield* sql`INSERT INTO test_workers (label) VALUES (${label})
        ON CONFLICT (label) DO UPDATE SET running = 0, max_running = 0`
    }).pipe(sql.withTransaction)
  }).pipe(Effect.orDie)
)

const StandInTranscribe = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const label = yield* Config.String("CLUSTER_TEST_WORKER").pipe(Effect.orDie)
    const config = yield* SpeechConfig

    const enter = (jobId: JobId) =>
      Effect.all([
        sql`UPDATE test_jobs SET invocations = invocations + 1, running = running + 1,
          max_running = GREATEST(max_running, running + 1) WHERE id = ${jobId}`,
        sql`UPDATE test_workers SET running = running + 1, max_running = GREATEST(max_running, running + 1)
          WHERE label = ${label}`
      ], { discard: true })
    const leave = (jobId: JobId) =>
      Effect.all([
        sql`UPDATE test_jobs SET running = running - 1 WHERE id = ${jobId}`,
        sql`UPDATE test_workers SET running = running - 1 WHERE label = ${label}`
      ], { discard: true }).pipe(Effect.orDie)

    const work = Effect.fnUntraced(function*(jobId: JobId) {
      const claimed = yield* sql<{ duration_ms: number }>`UPDATE test_jobs
        SET status = 'processing', attempts = attempts + 1, processed_by = ${label}, heartbeat_at = now()
        WHERE id = ${jobId} AND status NOT IN ('done', 'failed') RETURNING duration_ms`
      const job = claimed[0]
      if (job === undefined) return
      if (job.duration_ms < 0) return yield* Effect.die(new Error(`test defect in job ${jobId}`))
      // The duration is read again with every heartbeat, so a test can shorten a run.
      const started = Date.now()
      let until = started + job.duration_ms
      while (Date.now() < until) {
        yield* Effect.sleep(Math.min(200, Math.max(0, until - Date.now())))
        const [beat] = yield* sql<{ duration_ms: number }>`UPDATE test_jobs SET heartbeat_at = now()
          WHERE id = ${jobId} RETURNING duration_ms`
        if (beat !== undefined) until = started + beat.duration_ms
      }
      yield* sql`UPDATE test_jobs SET status = 'done', completions = completions + 1, finished_by = ${label}
        WHERE id = ${jobId} AND status <> 'done'`
    })

    const run = (task: TaskRun<null, "job">) =>
      Effect.acquireUseRelease(
        Effect.orDie(enter(task.jobId)),
        () => Effect.orDie(work(task.jobId)),
        () => leave(task.jobId)
      )

    const giveUp = (task: GivenUpTask<null, "job">, reason: GiveUpReason) =>
      sql`UPDATE test_jobs SET status = 'failed', gave_up = ${reason}
        WHERE id = ${task.jobId} AND status NOT IN ('done', 'failed')`.pipe(Effect.asVoid, Effect.orDie)

    return { kind: "transcribe", concurrency: config.workers, timeout: "1 hour", stallAfter: "1 hour", run, giveUp } satisfies TaskHandler<null, "job">
  })

// `CLUSTER_TEST_RECONCILE=off` hides every job from the start-up reconciler, so a test can
// show that a job finishes through its stored message alone.
const TestUnfinished = Layer.effect(
  UnfinishedJobs,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reconcile = yield* Config.Literals(["on", "off"], "CLUSTER_TEST_RECONCILE").pipe(Config.withDefault("on"))
    const list = reconcile === "off"
      ? Effect.succeed([])
      : sql<{ id: string }>`SELECT id FROM test_jobs WHERE status NOT IN ('done', 'failed') ORDER BY created_at`.pipe(
        Effect.flatMap((rows) => Schema.decodeUnknownEffect(Schema.Array(JobId))(rows.map((row) => row.id))),
        Effect.orDie
      )
    return UnfinishedJobs.of({ list })
  })
)

const reconcile = Config.Literals(["on", "off"], "CLUSTER_TEST_RECONCILE").pipe(Config.withDefault("on"))
const backoffMs = Config.Int("CLUSTER_TEST_BACKOFF_MS").pipe(Config.withDefault(2_000))

const Engine = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* DatabaseConfig
    const on = (yield* reconcile) === "on"
    const backoff = yield* backoffMs
    const engine = WorkClusterLayer(
      { ...clusterOptionsFrom(config), engine: { backoff: `${backoff} millis` } },
      TaskHandlers.layer([StandInTranscribe])
    )
    return (on ? JobReconciler : Layer.empty).pipe(
      Layer.provideMerge(JobDispatcher.layer),
      Layer.provideMerge(engine),
      Layer.provide(TestUnfinished)
    )
  })
)

const WorkerLayer = Engine.pipe(
  Layer.provide(TaskStore.layer),
  Layer.provide(TestTables),
  Layer.provideMerge(DatabaseLayer),
  Layer.provide(Configuration.layer)
)

const say = (line: string) => Effect.sync(() => process.stdout.write(`@@${line}\n`))

const decodeId = Schema.decodeUnknownEffect(JobId)

const command = Effect.fnUntraced(function*(line: string) {
  const dispatcher = yield* JobDispatcher
  const [verb, id] = line.trim().split(/\s+/)
  if (verb === undefined || verb === "") return
  const jobId = yield* decodeId(id)
  if (verb === "dispatch") yield* dispatcher.dispatch(jobId)
  else if (verb === "dispatch2") {
    yield* Effect.all([dispatcher.dispatch(jobId), dispatcher.dispatch(jobId)], { concurrency: 2, discard: true })
  } else return yield* Effect.die(new Error(`unknown command ${verb}`))
  yield* say(`dispatched ${jobId}`)
})

const main = Effect.gen(function*() {
  yield* say("ready")
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  yield* Stream.fromAsyncIterable(lines, (error) => error).pipe(
    // Commands run concurrently: a dispatch must never wait for another one.
    Stream.runForEach((line) => Effect.forkChild(command(line))),
    Effect.orDie
  )
  yield* Effect.logInfo("stdin closed, exiting")
})

NodeRuntime.runMain(main.pipe(Effect.provide(WorkerLayer)))
