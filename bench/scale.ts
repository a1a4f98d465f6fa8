/**
 * Scale-out benchmark (issue 25 item 5): 1, 2 and 3 `verbatim serve` processes (npm start's
 * entry, `src/main.ts serve`) on one Postgres, each with its own port, runner port and data dir,
 * all with one shared media dir, take one batch of short speech clips.
 *
 *   npx node bench/scale.ts                 full run (~8 minutes on 2 cores)
 *   npx node bench/scale.ts --jobs 6 --runs 1x1,2x1 --no-kill   a quick look
 *   options: --jobs N (default 24)  --runs 1x1,1x2,2x1,1x3,3x1 (processes x threads)  --no-kill
 *            --model whisper-tiny.en|whisper-base  --database-url URL (default the local server)
 *            --root DIR (run another checkout's server)
 *
 * Each run gets a fresh database (`CREATE DATABASE verbatim_scale_<run>_<time>`, dropped after)
 * and fresh dirs. Every process: VERBATIM_THREADS = the run's threads, VERBATIM_WORKERS=1 (one
 * job at a time), the given model (default whisper-tiny.en). Half of the jobs come from metered
 * accounts (credits; 5 recordings at once each), half from an enterprise account (20 at once, so
 * --jobs 40 at most) with a `webhook_url` on a local
 * receiver; submissions go round-robin over the processes, as a load balancer would send them.
 *
 * Per run it prints: jobs per minute (first submit to last job end), the ratio to one process at
 * the same total thread count (`1xN`) and to one process with one thread, CPU per job (user +
 * system of every process tree, from /proc), the split of transcriptions per process (from each
 * process's "task started" log lines), and checks: every job done and transcribed once, each
 * metered job charged exactly once (one ledger row, matching `charged_minutes`), each enterprise
 * job's webhook received exactly once (one request per `webhook-id`, one delivery row per job).
 *
 * Then the kill run: 2 processes x 1 thread; once a third of the batch is done and a process has
 * a transcription in flight, that process is killed with SIGKILL, and the bench reports how long
 * the survivor takes to finish the jobs the killed one had in flight and the whole batch. The
 * same checks run, with the killed process's in-flight jobs allowed a second start (and their
 * webhooks, if one was in flight, a second request with the same `webhook-id`).
 */
import { PgClient } from "@effect/sql-pg"
import { ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { mediaDir, modelsDir } from "../test/support/paths.ts"
import { freePort } from "../test/support/ports.ts"
import { processTree, treeCpuMs } from "./ProcessTree.ts"
import { flag, option } from "./Args.ts"

const root = path.resolve(option("root", path.resolve(import.meta.dirname, "..")))
const jobCount = Number(option("jobs", "24"))
const model = option("model", "whisper-tiny.en")
const serverUrl = option("database-url", "postgres://postgres@127.0.0.1:5432/postgres")
const runs = option("runs", "1x1,1x2,2x1,1x3,3x1").split(",").map((spec) => {
  const [procs, threads] = spec.split("x").map(Number)
  return { procs: procs!, threads: threads! }
})
const clips = ["a01_slt_budget.wav", "a02_kal_weather.wav", "a03_espeak_library.wav", "a04_ked_podcast.wav", "a07_noisy_weather.wav"]
  .map((name) => path.join(mediaDir, name))

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const nodeArgs = ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", path.join(root, "src/main.ts")]
const commit = spawnSync("git", ["log", "-1", "--format=%h %s"], { cwd: root, encoding: "utf8" }).stdout.trim()
const dirty = spawnSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: root, encoding: "utf8" }).stdout.trim() !== ""

// ---------------------------------------------------------------- the database server

const sqlOn = (url: string) => ManagedRuntime.make(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
const run = <A extends object>(runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>, statement: string) =>
  runtime.runPromise(SqlClient.SqlClient.use((sql) => sql.unsafe<A>(statement)))
const adminDb = sqlOn(serverUrl)

// ---------------------------------------------------------------- webhook receiver

interface Received {
  readonly webhookId: string
  readonly at: number
}
const received: Array<Received> = []
const receiver = http.createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    received.push({ webhookId: String(req.headers["webhook-id"]), at: Date.now() })
    res.writeHead(200).end("ok")
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverPort = (receiver.address() as net.AddressInfo).port

// ---------------------------------------------------------------- processes

interface Server {
  readonly index: number
  readonly child: ChildProcess
  readonly base: string
  readonly log: () => string
}

const children: Array<ChildProcess> = []
process.on("exit", () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
})

const startServer = async (index: number, env: Record<string, string>): Promise<Server> => {
  const port = await freePort()
  const child = spawn(process.execPath, [...nodeArgs, "serve"], {
    cwd: root,
    env: { ...env, VERBATIM_PORT: String(port), VERBATIM_RUNNER_PORT: String(await freePort()), VERBATIM_DATA_DIR: `${env["VERBATIM_DATA_DIR"]}/p${index}` },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  let log = ""
  child.stdout!.on("data", (chunk: Buffer) => void (log += chunk.toString()))
  child.stderr!.on("data", (chunk: Buffer) => void (log += chunk.toString()))
  const until = Date.now() + 90_000
  while (!log.includes("\"msg\":\"listening\"")) {
    if (child.exitCode !== null) throw new Error(`process ${index} exited (${child.exitCode}):\n${log}`)
    if (Date.now() > until) throw new Error(`process ${index} did not start:\n${log}`)
    await sleep(100)
  }
  return { index, child, base: `http://127.0.0.1:${port}`, log: () => log }
}

/** JSON log lines of one process with the given message. */
const logLines = (server: Server, msg: string) =>
  server.log().split("\n").flatMap((line) => {
    if (!line.startsWith("{") || !line.includes(`"msg":"${msg}"`)) return []
    try {
      return [JSON.parse(line) as Record<string, unknown>]
    } catch {
      return []
    }
  })
const transcriptionsStarted = (server: Server) =>
  logLines(server, "task started").filter((line) => line["kind"] === "transcribe").map((line) => String(line["job_id"]))
const transcriptionsEnded = (server: Server) =>
  logLines(server, "task ended").filter((line) => line["kind"] === "transcribe").map((line) => String(line["job_id"]))

const cpuOf = (server: Server) => (server.child.exitCode === null && server.child.signalCode === null ? treeCpuMs(server.child.pid!) : 0)

// ---------------------------------------------------------------- one run

interface RunResult {
  readonly label: string
  readonly procs: number
  readonly threads: number
  readonly jobsPerMinute: number
  readonly cpuSecondsPerJob: number
  readonly split: ReadonlyArray<number>
  readonly problems: ReadonlyArray<string>
  readonly kill?: string
}

const runOnce = async (procs: number, threads: number, kill: boolean): Promise<RunResult> => {
  const label = `${procs}x${threads}${kill ? "-kill" : ""}`
  const database = `verbatim_scale_${label.replace("-", "_")}_${Date.now().toString(36)}`
  await run(adminDb, `CREATE DATABASE ${database}`)
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), `verbatim-scale-${label}-`))
  const env: Record<string, string> = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VERBATIM_") && k !== "DATABASE_URL")) as Record<string, string>,
    DATABASE_URL: url.href,
    VERBATIM_DATA_DIR: path.join(scratch, "data"),
    VERBATIM_MEDIA_DIR: path.join(scratch, "media"),
    VERBATIM_SECRET_KEY: "bench-scale-secret-key-0123456789abcdef",
    VERBATIM_MODELS_DIR: modelsDir,
    VERBATIM_MODEL: model,
    VERBATIM_THREADS: String(threads),
    VERBATIM_WORKERS: "1",
    VERBATIM_FETCH_ALLOW: `127.0.0.1:${receiverPort}`,
    VERBATIM_RATE_LIMIT_PER_MINUTE: "1000000",
    VERBATIM_ENTERPRISE_RATE_LIMIT_PER_MINUTE: "1000000",
    VERBATIM_BATCH_STATUS_PER_MINUTE: "1000000"
  }
  const db = sqlOn(url.href)
  const servers: Array<Server> = []
  try {
    // The first process migrates the database; the others start beside it.
    servers.push(await startServer(0, env))
    servers.push(...await Promise.all(Array.from({ length: procs - 1 }, (_, i) => startServer(i + 1, env))))

    const admin = (...args: Array<string>) => {
      const done = spawnSync(process.execPath, [...nodeArgs, "admin", ...args], { cwd: root, env: { ...env, VERBATIM_DATA_DIR: `${env["VERBATIM_DATA_DIR"]}/admin` }, encoding: "utf8" })
      if (done.status !== 0) throw new Error(`admin ${args.join(" ")}: ${done.stderr}`)
      return JSON.parse(done.stdout) as Record<string, unknown>
    }
    // The standard plan runs 5 recordings at once per account: enough accounts for the batch's metered half.
    const meteredKeys = Array.from({ length: Math.ceil(Math.ceil(jobCount / 2) / 5) }, (_, i) => {
      const email = `metered${i}@example.com`
      admin("account", "create", "--email", email, "--api-access")
      admin("credits", "grant", "--email", email, "--minutes", "100000")
      return String(admin("key", "create", "--email", email).key)
    })
    admin("account", "create", "--email", "hooks@example.com", "--api-access")
    admin("plan", "set", "--email", "hooks@example.com", "--plan", "enterprise")
    const hooksKey = String(admin("key", "create", "--email", "hooks@example.com").key)

    const receivedBefore = received.length
    const cpuBefore = servers.map(cpuOf)
    const lastCpu = [...cpuBefore]
    const started = Date.now()
    const submitted = await Promise.all(Array.from({ length: jobCount }, async (_, i) => {
      const hooks = i % 2 === 1
      const form = new FormData()
      const clip = clips[i % clips.length]!
      form.append("file", new Blob([fs.readFileSync(clip)], { type: "audio/wav" }), path.basename(clip))
      if (hooks) form.append("webhook_url", `http://127.0.0.1:${receiverPort}/hook`)
      const response = await fetch(`${servers[i % procs]!.base}/v1/transcribe`, {
        method: "POST",
        headers: { "X-API-Key": hooks ? hooksKey : meteredKeys[Math.floor(i / 2) % meteredKeys.length]! },
        body: form
      })
      const body = await response.json() as { job_id?: string }
      if (body.job_id === undefined) throw new Error(`submit answered ${response.status}: ${JSON.stringify(body)}`)
      return { id: body.job_id, hooks }
    }))
    const ids = submitted.map((job) => job.id)
    const idList = ids.map((id) => `'${id}'`).join(",")

    let killReport: string | undefined
    let killedAt: number | undefined
    let killedEnded = 0
    let inFlightAtKill: Array<string> = []
    let victim: Server | undefined
    const ended = async () =>
      (await run<{ n: number }>(db, `SELECT count(*)::int AS n FROM jobs WHERE id IN (${idList}) AND status IN ('done', 'failed')`))[0]!.n
    for (;;) {
      servers.forEach((server, i) => {
        if (server !== victim) lastCpu[i] = cpuOf(server)
      })
      const n = await ended()
      if (n === jobCount) break
      if (Date.now() - started > 15 * 60_000) throw new Error(`${label}: ${jobCount - n} jobs still running after 15 minutes`)
      if (kill && victim === undefined && n >= jobCount / 3) {
        // A process whose log shows a transcription started and not ended, and which the
        // database still has processing (a log line may lag the job's end by a moment).
        for (const server of servers) {
          const done = new Set(transcriptionsEnded(server))
          const open = transcriptionsStarted(server).filter((id) => !done.has(id))
          if (open.length === 0) continue
          const processing = await run<{ id: string }>(
            db,
            `SELECT id::text AS id FROM jobs WHERE id IN (${open.map((id) => `'${id}'`).join(",")}) AND status = 'processing'`
          )
          if (processing.length === 0) continue
          for (const pid of processTree(server.child.pid!).reverse()) process.kill(pid, "SIGKILL")
          killedAt = Date.now()
          killedEnded = n
          victim = server
          inFlightAtKill = processing.map((row) => row.id)
          break
        }
      }
      await sleep(250)
    }
    const finished = Date.now()
    if (killedAt !== undefined) {
      const rows = await run<{ id: string; completed_at: Date }>(
        db,
        `SELECT id::text AS id, completed_at FROM jobs WHERE id IN (${inFlightAtKill.map((id) => `'${id}'`).join(",") || "NULL"})`
      )
      // Jobs that ended in the moment between the status read and the kill were not in flight after all.
      const after = rows.map((row) => new Date(row.completed_at).getTime()).filter((at) => at > killedAt)
      killReport = after.length === 0
        ? `killed process ${victim!.index} (SIGKILL), but its transcription ended at the kill; the batch ended ${
          ((finished - killedAt) / 1000).toFixed(1)
        } s after it`
        : `killed process ${victim!.index} (SIGKILL) with ${after.length} transcription(s) in flight, ${
          killedEnded
        } of ${jobCount} jobs ended; its in-flight job done on the survivor ${
          ((Math.max(...after) - killedAt) / 1000).toFixed(1)
        } s after the kill, the whole batch ${((finished - killedAt) / 1000).toFixed(1)} s after it`
    }

    // Webhooks follow the job's end by a second or two (the event feed records the delivery, a runner claims its task).
    const hookJobs = submitted.filter((job) => job.hooks).map((job) => job.id)
    const deliveryRows = () => run<{ id: string; job_id: string }>(db, `SELECT id::text AS id, job_id::text AS job_id FROM webhook_deliveries`)
    let deliveries = await deliveryRows()
    for (const until = Date.now() + 30_000; Date.now() < until; deliveries = await deliveryRows()) {
      const got = new Set(received.slice(receivedBefore).map((r) => r.webhookId))
      if (deliveries.length >= hookJobs.length && deliveries.every((d) => got.has(d.id))) break
      await sleep(500)
    }
    // A second request for any of them would have come by now (the loop runs every second).
    await sleep(2_000)

    // ------------------------------------------------ checks
    const problems: Array<string> = []
    const statuses = await run<{ status: string; n: number }>(db, `SELECT status, count(*)::int AS n FROM jobs WHERE id IN (${idList}) GROUP BY status`)
    const notDone = statuses.filter((row) => row.status !== "done")
    if (notDone.length > 0) problems.push(`jobs not done: ${JSON.stringify(notDone)}`)

    const startsPerJob = new Map<string, number>()
    for (const server of servers) for (const id of transcriptionsStarted(server)) startsPerJob.set(id, (startsPerJob.get(id) ?? 0) + 1)
    const ranTwice = ids.filter((id) => (startsPerJob.get(id) ?? 0) > 1)
    const unexpectedTwice = ranTwice.filter((id) => !inFlightAtKill.includes(id))
    const never = ids.filter((id) => (startsPerJob.get(id) ?? 0) === 0)
    if (unexpectedTwice.length > 0) problems.push(`${unexpectedTwice.length} job(s) transcribed more than once`)
    if (never.length > 0) problems.push(`${never.length} job(s) with no transcription start in any log`)

    const charges = await run<{ id: string; charged: string | null; rows: number; minutes: string | null }>(
      db,
      `SELECT j.id::text AS id, j.charged_minutes::text AS charged, count(l.ref)::int AS rows, (-sum(l.minutes))::text AS minutes
       FROM jobs j LEFT JOIN ledger l ON l.kind = 'job_charge' AND l.ref = j.id::text
       WHERE j.id IN (${submitted.filter((job) => !job.hooks).map((job) => `'${job.id}'`).join(",")}) GROUP BY j.id, j.charged_minutes`
    )
    const badCharges = charges.filter((row) => row.rows !== 1 || Number(row.charged) !== Number(row.minutes))
    if (badCharges.length > 0) problems.push(`${badCharges.length} metered job(s) not charged exactly once: ${JSON.stringify(badCharges.slice(0, 3))}`)

    const perJob = new Map<string, number>()
    for (const delivery of deliveries) perJob.set(delivery.job_id, (perJob.get(delivery.job_id) ?? 0) + 1)
    const badRows = hookJobs.filter((id) => perJob.get(id) !== 1)
    if (badRows.length > 0) problems.push(`${badRows.length} webhook job(s) without exactly one delivery row`)
    const receipts = new Map<string, number>()
    for (const r of received.slice(receivedBefore)) receipts.set(r.webhookId, (receipts.get(r.webhookId) ?? 0) + 1)
    const missing = deliveries.filter((d) => (receipts.get(d.id) ?? 0) === 0)
    const twice = deliveries.filter((d) => (receipts.get(d.id) ?? 0) > 1)
    if (missing.length > 0) problems.push(`${missing.length} webhook(s) never received`)
    if (twice.length > 0) {
      const note = `${twice.length} webhook(s) received twice (same webhook-id)`
      if (killedAt === undefined) problems.push(note)
      else killReport += `; ${note}, in flight at the kill`
    }
    if (ranTwice.length > 0 && killedAt !== undefined) killReport += `; ${ranTwice.length} job(s) started again on the survivor`

    const cpuMs = lastCpu.reduce((sum, value, i) => sum + value - cpuBefore[i]!, 0)
    return {
      label,
      procs,
      threads,
      jobsPerMinute: jobCount / ((finished - started) / 60_000),
      cpuSecondsPerJob: cpuMs / 1000 / jobCount,
      split: servers.map((server) => new Set(transcriptionsEnded(server)).size),
      problems,
      ...(killReport === undefined ? {} : { kill: killReport })
    }
  } finally {
    await Promise.all(servers.map((server) =>
      new Promise<void>((resolve) => {
        if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve()
        server.child.once("close", () => resolve())
        server.child.kill("SIGTERM")
        setTimeout(() => server.child.kill("SIGKILL"), 30_000).unref()
      })
    ))
    await db.dispose()
    await run(adminDb, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------- main

console.log(`bench/scale: ${jobCount} jobs of ${clips.length} short clips (7-9 s), ${model}, VERBATIM_WORKERS=1, on ${os.cpus().length} cores`)
console.log(`commit ${commit}${dirty ? " (with uncommitted changes in the tree)" : ""}`)
const results: Array<RunResult> = []
const show = (result: RunResult) => {
  const single = results.find((r) => r.procs === 1 && r.threads === result.procs * result.threads && !r.kill)
  const one = results.find((r) => r.procs === 1 && r.threads === 1 && !r.kill)
  const ratio = (base: RunResult | undefined) => (base === undefined || base === result ? "" : ` ${(result.jobsPerMinute / base.jobsPerMinute).toFixed(2)}x`)
  console.log(
    `${result.label.padEnd(9)} ${result.jobsPerMinute.toFixed(1).padStart(6)} jobs/min` +
      `${single && single !== result && result.procs > 1 && result.kill === undefined ? `  vs 1x${result.procs * result.threads}:${ratio(single)}` : ""}` +
      `${one && result.procs > 1 && result.kill === undefined ? `  vs 1x1:${ratio(one)}` : ""}` +
      `  CPU ${result.cpuSecondsPerJob.toFixed(2)} s/job  split ${result.split.join("/")}` +
      `  ${result.problems.length === 0 ? "checks ok (each job done, transcribed once, charged once, webhook once)" : `PROBLEMS: ${result.problems.join("; ")}`}`
  )
  if (result.kill !== undefined) console.log(`          ${result.kill}`)
}
for (const { procs, threads } of runs) {
  const result = await runOnce(procs, threads, false)
  results.push(result)
  show(result)
}
if (!flag("no-kill")) {
  const result = await runOnce(2, 1, true)
  results.push(result)
  show(result)
}
await adminDb.dispose()
receiver.close()
process.exit(results.some((result) => result.problems.length > 0) ? 1 : 0)
