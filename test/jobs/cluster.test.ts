/**
 * Durable job execution with effect/cluster, with real worker processes
 * (test/support/clusterWorker.ts) on a real database: embedded PGlite owned by the worker
 * (the test reads the tables through the worker's unix socket), or Postgres when
 * VERBATIM_TEST_DATABASE_URL is set (socket runners). The `transcribe` task handler in the
 * workers is a stand-in working on a `test_jobs` table; everything else (task engine, job
 * dispatcher, reconcilers) is the app's composition.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Option, Schedule } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { freePort } from "../support/ports.ts"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { socketPathFor } from "../../services/db/EmbeddedPostgres.ts"
import { makeTestStorage, onPostgres, type TestStorage } from "../support/database.ts"
import { repoRoot } from "../support/process.ts"

const workerEntry = path.join(repoRoot, "test/support/clusterWorker.ts")

let storage: TestStorage
const workers = new Set<Worker>()

beforeAll(async () => {
  storage = await makeTestStorage("cluster")
})
afterAll(async () => {
  await Promise.all([...workers].map((worker) => worker.kill()))
  await storage?.dispose()
})

// ---------------------------------------------------------------------------------------
// Worker processes

interface Worker {
  readonly label: string
  readonly output: () => string
  send(line: string): void
  /** Resolves when stdout/stderr has matched `pattern` (searching from `from`). */
  waitFor(pattern: RegExp, timeoutMs: number, from?: number): Promise<void>
  kill(): Promise<void>
  /** Sends SIGTERM (SIGKILL after 20 s) and resolves once the process has exited. */
  stop(): Promise<void>
}

const cleanEnv = (env: Record<string, string>) => {
  const base: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith("VERBATIM_") && name !== "DATABASE_URL") base[name] = value
  }
  return { ...base, ...env }
}

const startWorker = async (
  label: string,
  options: { readonly poolSize?: number; readonly runnerPort?: number; readonly reconcile?: boolean } = {}
): Promise<Worker> => {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [workerEntry], {
    cwd: repoRoot,
    env: cleanEnv({
      ...storage.env,
      CLUSTER_TEST_WORKER: label,
      CLUSTER_TEST_RECONCILE: options.reconcile === false ? "off" : "on",
      VERBATIM_WORKERS: String(options.poolSize ?? 1),
      VERBATIM_RUNNER_HOST: "127.0.0.1",
      VERBATIM_RUNNER_PORT: String(options.runnerPort ?? 34431),
      CLUSTER_TEST_BACKOFF_MS: "300"
    })
  })
  let output = ""
  let closed = false
  // Every waiter re-checks on output and on exit.
  const listeners = new Set<() => void>()
  const notify = () => {
    for (const listener of [...listeners]) listener()
  }
  const onData = (chunk: Buffer) => {
    output += chunk.toString()
    notify()
  }
  child.stdout.on("data", onData)
  child.stderr.on("data", onData)
  const exited = new Promise<void>((resolve) =>
    child.once("close", () => {
      closed = true
      notify()
      resolve()
    })
  )
  const worker: Worker = {
    label,
    output: () => output,
    send: (line) => child.stdin.write(`${line}\n`),
    waitFor: (pattern, timeoutMs, from = 0) =>
      new Promise((resolve, reject) => {
        const settle = (error?: Error) => {
          clearTimeout(timer)
          listeners.delete(check)
          if (error) reject(error)
          else resolve()
        }
        const check = () => {
          if (pattern.test(output.slice(from))) settle()
          else if (closed) settle(new Error(`worker ${label} exited before ${pattern}:\n${output.slice(-4000)}`))
        }
        const timer = setTimeout(
          () => settle(new Error(`worker ${label}: no ${pattern} within ${timeoutMs} ms:\n${output.slice(-4000)}`)),
          timeoutMs
        )
        listeners.add(check)
        check()
      }),
    kill: async () => {
      workers.delete(worker)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      await exited
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
      await exited
      clearTimeout(timer)
      workers.delete(worker)
    }
  }
  workers.add(worker)
  try {
    await worker.waitFor(/@@ready/, 90_000)
  } catch (error) {
    await worker.kill()
    throw error
  }
  return worker
}

const dispatch = async (worker: Worker, jobId: string, verb = "dispatch") => {
  const from = worker.output().length
  worker.send(`${verb} ${jobId}`)
  await worker.waitFor(new RegExp(`@@dispatched ${jobId}`), 15_000, from)
}

// ---------------------------------------------------------------------------------------
// The test's own view of the tables

interface JobRow {
  readonly id: string
  readonly status: string
  readonly attempts: number
  readonly completions: number
  readonly invocations: number
  readonly max_running: number
  readonly processed_by: string | null
  readonly finished_by: string | null
  readonly gave_up: string | null
}

const clientLayer = () =>
  Option.match(storage.databaseUrl, {
    onSome: (url) => PgClient.layer({ url, maxConnections: 1 }),
    // The worker owns the embedded database; visit it through its socket.
    onNone: () =>
      PgClient.layer({
        path: socketPathFor(path.join(storage.dataDir, "pg")),
        database: "postgres",
        username: "postgres",
        maxConnections: 1
      })
  })

/**
 * One short connection per call: the embedded database's owner may have just been killed.
 * PGlite's socket admits one visitor besides the worker and may not have seen the previous
 * visitor leave yet, so a refused connect (nothing ran) is tried again.
 */
const query = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<A> =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(
    Effect.provide(clientLayer()),
    Effect.scoped,
    Effect.retry({
      while: (error) => SqlError.isSqlError(error) && error.reason._tag === "ConnectionError",
      schedule: Schedule.spaced("100 millis"),
      times: 30
    }),
    Effect.timeout("10 seconds"),
    Effect.runPromise
  )

const seed = (jobs: ReadonlyArray<{ readonly id: string; readonly durationMs: number }>) =>
  query((sql) =>
    Effect.forEach(jobs, (job) => sql`INSERT INTO test_jobs (id, duration_ms) VALUES (${job.id}, ${job.durationMs})`, {
      discard: true
    })
  )

const jobRows = (ids: ReadonlyArray<string>) =>
  query((sql) =>
    sql<JobRow>`SELECT id::text AS id, status, attempts, completions, invocations, max_running, processed_by, finished_by,
      gave_up FROM test_jobs WHERE id IN ${sql.in(ids)} ORDER BY created_at`
  )

const workerMaxRunning = (label: string) =>
  query((sql) => sql<{ max_running: number }>`SELECT max_running FROM test_workers WHERE label = ${label}`).then(
    (rows) => rows[0]?.max_running
  )

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `probe` (query failures count as "not yet") until it returns a value. */
const waitUntil = async <A>(what: string, timeoutMs: number, probe: () => Promise<A | undefined>): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  while (Date.now() < deadline) {
    try {
      const value = await probe()
      if (value !== undefined) return value
    } catch (error) {
      lastError = error
    }
    await sleep(250)
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ""}`)
}

const allDone = (ids: ReadonlyArray<string>, timeoutMs: number) =>
  waitUntil(`${ids.length} jobs done`, timeoutMs, async () => {
    const rows = await jobRows(ids)
    return rows.length === ids.length && rows.every((row) => row.status === "done") ? rows : undefined
  })

const newJobs = (count: number, durationMs: number) =>
  Array.from({ length: count }, () => ({ id: randomUUID(), durationMs }))

// ---------------------------------------------------------------------------------------

describe(`durable jobs on ${onPostgres ? "Postgres (socket runners)" : "embedded PGlite (single runner)"}`, () => {
  // The second worker's reconciler is off in these two: only the stored message can finish the job.
  it("a job whose worker is killed mid-run ends done exactly once after a new worker starts", async () => {
    const port = await freePort()
    const first = await startWorker("crash-a", { runnerPort: port })
    const [job] = newJobs(1, 5_000)
    let second: Worker | undefined
    try {
      await seed([job!])
      await dispatch(first, job!.id)
      await waitUntil("the first worker to claim the job", 20_000, async () => {
        const [row] = await jobRows([job!.id])
        return row?.status === "processing" && row.processed_by === "crash-a" ? row : undefined
      })
      await first.kill()

      // Same storage, same runner address: a restart.
      const restartAt = Date.now()
      second = await startWorker("crash-b", { runnerPort: port, reconcile: false })
      const readyAt = Date.now()
      await waitUntil("the new worker to claim the job", 30_000, async () => {
        const [row] = await jobRows([job!.id])
        return row?.processed_by === "crash-b" ? row : undefined
      })
      console.log(`restart: ready after ${readyAt - restartAt} ms, job claimed again ${Date.now() - readyAt} ms later`)
      const [row] = await allDone([job!.id], 60_000)
      expect(row).toMatchObject({ status: "done", completions: 1, finished_by: "crash-b" })
      expect(row!.attempts).toBeGreaterThanOrEqual(2)
    } finally {
      await first.stop()
      await second?.stop()
    }
  })

  it("a dispatch that returned survives a crash right after it; the reconciler runs undispatched jobs", async () => {
    const port = await freePort()
    // Reconciler off here too: under load its start-up pass could run after the seed below
    // and dispatch the job this test keeps undispatched.
    const first = await startWorker("durable-a", { runnerPort: port, reconcile: false })
    const [dispatched, forgotten] = newJobs(2, 1_000)
    let second: Worker | undefined
    let third: Worker | undefined
    try {
      // Long enough for the kill to land before the job's 1 s run can end.
      await seed([dispatched!, forgotten!])
      await dispatch(first, dispatched!.id)
      await first.kill()

      second = await startWorker("durable-b", { runnerPort: port, reconcile: false })
      const [row] = await allDone([dispatched!.id], 60_000)
      expect(row).toMatchObject({ completions: 1, finished_by: "durable-b" })
      // Never dispatched, and this worker's reconciler is off: nothing runs it.
      await sleep(2_000)
      expect((await jobRows([forgotten!.id]))[0]).toMatchObject({ status: "queued", invocations: 0 })
      await second.stop()

      third = await startWorker("durable-c", { runnerPort: port })
      const [reconciled] = await allDone([forgotten!.id], 60_000)
      expect(reconciled).toMatchObject({ completions: 1, attempts: 1, finished_by: "durable-c" })
    } finally {
      await first.stop()
      await second?.stop()
      await third?.stop()
    }
  })

  it("a worker stopped with SIGTERM interrupts its run at once; the next worker runs the job again", async () => {
    const port = await freePort()
    const first = await startWorker("term-a", { runnerPort: port })
    const [job] = newJobs(1, 60_000)
    let second: Worker | undefined
    try {
      await seed([job!])
      await dispatch(first, job!.id)
      await waitUntil("the first worker to claim the job", 20_000, async () => {
        const [row] = await jobRows([job!.id])
        return row?.status === "processing" ? row : undefined
      })
      const stopAt = Date.now()
      await first.stop()
      const stopMs = Date.now() - stopAt
      // The run is interrupted, not waited for (usually well under a second; the shard
      // hand-off wait is bounded by the lock refresh interval, 10 s).
      expect(stopMs).toBeLessThan(15_000)
      const [stopped] = await jobRows([job!.id]).catch(() => [undefined])
      if (stopped) expect(stopped).toMatchObject({ status: "processing", completions: 0 })

      second = await startWorker("term-b", { runnerPort: port, reconcile: false })
      // The re-run need not take 30 s (the stand-in re-reads its duration while it runs).
      await query((sql) => sql`UPDATE test_jobs SET duration_ms = 500 WHERE id = ${job!.id}`)
      const [row] = await allDone([job!.id], 60_000)
      expect(row).toMatchObject({ completions: 1, attempts: 2, finished_by: "term-b" })
      console.log(`SIGTERM with a job running: exited after ${stopMs} ms`)
    } finally {
      await first.stop()
      await second?.stop()
    }
  })

  it("runs at most pool-size jobs at once, serialises duplicate dispatches, and survives a defect", async () => {
    const worker = await startWorker("pool", { poolSize: 2, runnerPort: await freePort() })
    try {
      // Pool of two, five jobs.
      const jobs = newJobs(5, 1_500)
      await seed(jobs)
      await Promise.all(jobs.map((job) => dispatch(worker, job.id)))
      const rows = await allDone(jobs.map((job) => job.id), 60_000)
      expect(rows.map((row) => row.completions)).toEqual([1, 1, 1, 1, 1])
      expect(await workerMaxRunning("pool")).toBe(2)

      // The same job dispatched twice at once: one task, both messages handled one at a time;
      // the second finds the task done and does not run it again.
      const [twice] = newJobs(1, 2_000)
      await seed([twice!])
      await dispatch(worker, twice!.id, "dispatch2")
      await allDone([twice!.id], 30_000)
      await sleep(1_000)
      const [afterBoth] = await jobRows([twice!.id])
      expect(afterBoth).toMatchObject({ completions: 1, attempts: 1, invocations: 1, max_running: 1 })

      // A defect in the task run is logged and retried with backoff up to the attempt cap (3),
      // then given up (the handler's giveUp ends the row failed); the worker goes on.
      const [broken] = newJobs(1, -1)
      const [healthy] = newJobs(1, 500)
      await seed([broken!, healthy!])
      await dispatch(worker, broken!.id)
      await dispatch(worker, healthy!.id)
      await allDone([healthy!.id], 30_000)
      await worker.waitFor(/test defect in job/, 5_000)
      const brokenRow = await waitUntil("the broken job to be given up", 30_000, async () => {
        const [row] = await jobRows([broken!.id])
        return row?.status === "failed" ? row : undefined
      })
      expect(brokenRow).toMatchObject({ status: "failed", gave_up: "exhausted", invocations: 3, completions: 0 })
      await sleep(1_500)
      expect((await jobRows([broken!.id]))[0]).toMatchObject({ invocations: 3 })
    } finally {
      await worker.stop()
    }
  })

  it.skipIf(!onPostgres)("two runners share the jobs; a killed runner's jobs are finished by the other", async () => {
    const [portA, portB] = [await freePort(), await freePort()]
    const [a, b] = await Promise.all([
      startWorker("share-a", { poolSize: 2, runnerPort: portA }),
      startWorker("share-b", { poolSize: 2, runnerPort: portB })
    ])
    try {
      // Both runners hold shard locks (one advisory-lock session each).
      await waitUntil("both runners to hold shards", 30_000, async () => {
        const [row] = await query((sql) =>
          sql<{ sessions: number }>`SELECT count(DISTINCT pid)::int AS sessions FROM pg_locks
            WHERE locktype = 'advisory' AND granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
        )
        return row!.sessions >= 2 ? true : undefined
      })

      const short = newJobs(12, 800)
      await seed(short)
      await Promise.all(short.map((job) => dispatch(a, job.id)))
      const rows = await allDone(short.map((job) => job.id), 60_000)
      expect(rows.map((row) => row.completions)).toEqual(short.map(() => 1))
      const byA = rows.filter((row) => row.finished_by === "share-a").length
      const byB = rows.filter((row) => row.finished_by === "share-b").length
      expect(byA).toBeGreaterThan(0)
      expect(byB).toBeGreaterThan(0)
      expect(byA + byB).toBe(12)

      const long = newJobs(6, 4_000)
      await seed(long)
      await Promise.all(long.map((job) => dispatch(b, job.id)))
      const onA = await waitUntil("runner A to be working on a job", 20_000, async () => {
        const rows = await jobRows(long.map((job) => job.id))
        const claimed = rows.filter((row) => row.status === "processing" && row.processed_by === "share-a")
        return claimed.length > 0 ? claimed.map((row) => row.id) : undefined
      })
      const killedAt = Date.now()
      await a.kill()
      const finished = await allDone(long.map((job) => job.id), 90_000)
      const takeoverMs = Date.now() - killedAt
      expect(finished.map((row) => row.completions)).toEqual(long.map(() => 1))
      for (const row of finished.filter((row) => onA.includes(row.id))) {
        expect(row.finished_by).toBe("share-b")
        expect(row.attempts).toBeGreaterThanOrEqual(2)
      }
      console.log(`runner A killed; its ${onA.length} running job(s) finished by B after ${takeoverMs} ms`)
    } finally {
      await a.stop()
      await b.stop()
    }
  })

  // Needs two processes on one database: embedded PGlite has one process (a single runner).
  it.skipIf(!onPostgres)("idle capacity takes queued work: the queue splits by load, not by task id (two runners, one slot each; Postgres only, PGlite is one process)", async () => {
    const [portA, portB] = [await freePort(), await freePort()]
    const [a, b] = await Promise.all([
      startWorker("load-a", { poolSize: 1, runnerPort: portA }),
      startWorker("load-b", { poolSize: 1, runnerPort: portB })
    ])
    try {
      // One long job first, then ten short ones, all dispatched through A. Split by the hash
      // of the task id, the runner of the long job would also get about half of the short
      // ones queued behind it; split by load, the other runner takes them while it is busy.
      const long = newJobs(1, 6_000)
      const short = newJobs(10, 300)
      await seed([...long, ...short])
      await dispatch(a, long[0]!.id)
      await waitUntil("the long job to start", 20_000, async () => {
        const [row] = await jobRows([long[0]!.id])
        return row?.status === "processing" ? true : undefined
      })
      const started = Date.now()
      await Promise.all(short.map((job) => dispatch(a, job.id)))
      const rows = await allDone([...long, ...short].map((job) => job.id), 60_000)
      const elapsedMs = Date.now() - started
      expect(rows.map((row) => row.completions)).toEqual(rows.map(() => 1))
      expect(await workerMaxRunning("load-a")).toBeLessThanOrEqual(1)
      expect(await workerMaxRunning("load-b")).toBeLessThanOrEqual(1)
      const longRunner = rows.find((row) => row.id === long[0]!.id)!.finished_by
      const byLongRunner = rows.filter((row) => row.finished_by === longRunner).length
      console.log(
        `split by load: the long job's runner (${longRunner}) finished ${byLongRunner} of 11 jobs; all done ${elapsedMs} ms after the short ones were queued`
      )
      expect(byLongRunner).toBeLessThanOrEqual(2)
    } finally {
      await a.stop()
      await b.stop()
    }
  })
})
