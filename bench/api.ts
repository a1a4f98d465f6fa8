/**
 * API responsiveness benchmark: how the service answers reads, idle and while a long file
 * transcribes, beside a bare `node:http` server in the same run; plus the server's idle RSS and
 * start-up peak.
 *
 *   npx node bench/api.ts                       full run (~3 minutes)
 *   npx node bench/api.ts --minutes 10          a longer recording for the busy phase
 *   npx node bench/api.ts --rss-only            start, idle RSS, one short job, RSS after it; no load
 *   npx node bench/api.ts --root DIR            run the server of another checkout (before/after)
 *   npx node bench/api.ts --database-url URL    the server on a Postgres server (an empty database)
 *                                               instead of the embedded PGlite
 *
 * What it does: starts `src/main.ts serve` (embedded PGlite in a temp dir, whisper-tiny.en, WASM
 * decoder, default log level, rate limits raised so the load is not refused) as a child process and
 * samples its RSS (`/proc/PID/status`: VmRSS, VmHWM = peak). An account, credits and a key come from
 * the admin CLI (which reaches the running server's database through its socket). A short clip is
 * transcribed so `GET /v1/jobs/{id}` has a finished job. A bare `node:http` server (its own child
 * process) answers each route with a fixed body of the same size as the real answer.
 *
 * Load, two kinds. Throughput: a closed loop of `--connections` (default 8) keep-alive connections
 * per target, each sending the next request when the previous answer has been read (rps, and latency
 * at saturation, which is mostly queueing). Responsiveness: an open loop at a fixed `--rate` (default
 * 20 requests/s per target, far below saturation), latency request to end of body: what one client
 * polling a job sees. Targets: `GET /v1/jobs/{id}`, `GET /v1/jobs`, `GET /v1/me` with the key, and
 * the bare server's copy of each (after a 2 s warm-up per route, not counted). Beside each closed loop, the server's CPU time per request
 * (/proc: the whole process, and its main thread alone), which other load on the machine
 * hardly moves (while a file transcribes the process figure includes the pipeline's CPU). Idle: each target for `--seconds` (default 5). Busy: a
 * ~`--minutes` (default 10) recording (the shared speech clips back to back) is submitted, and while
 * it processes the targets are loaded in turn in slices of 2 s until the job ends (or 90 s pass), so
 * each target sees the same phase of the transcription.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { cpuMsOf, treeCpuMs, treeMemoryKb } from "./ProcessTree.ts"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { mediaDir, modelsDir } from "../test/support/paths.ts"
import { readWavPcm16, writeWav } from "../test/support/wav.ts"
import { flag, option } from "./Args.ts"

const root = path.resolve(option("root", path.resolve(import.meta.dirname, "..")))
const minutes = Number(option("minutes", "10"))
const rate = Number(option("rate", "20"))
const seconds = Number(option("seconds", "5"))
const connections = Number(option("connections", "8"))
const busyLimitMs = 90_000

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const mb = (kb: number) => `${Math.round(kb / 1024)} MB`

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
    server.on("error", reject)
  })

/** VmRSS and VmHWM (peak) of the server's processes, in kB. */
const memory = treeMemoryKb

// ---------------------------------------------------------------- the server under test

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-bench-api-"))
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VERBATIM_") && k !== "DATABASE_URL")),
  VERBATIM_DATA_DIR: path.join(scratch, "data"),
  VERBATIM_PORT: String(port),
  VERBATIM_RUNNER_PORT: String(await freePort()),
  VERBATIM_MODELS_DIR: modelsDir,
  VERBATIM_MODEL: "whisper-tiny.en",
  VERBATIM_DECODER: "wasm",
  VERBATIM_RATE_LIMIT_PER_MINUTE: "10000000",
  VERBATIM_ENTERPRISE_RATE_LIMIT_PER_MINUTE: "10000000",
  VERBATIM_BATCH_STATUS_PER_MINUTE: "10000000",
  ...(option("database-url", "") === "" ? {} : { DATABASE_URL: option("database-url", "") })
}
const nodeArgs = ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", path.join(root, "src/main.ts")]

const started = performance.now()
const server: ChildProcess = spawn(process.execPath, [...nodeArgs, "serve"], { cwd: root, env, stdio: ["ignore", "ignore", "pipe"] })
let serverErrors = ""
server.stderr!.on("data", (chunk: Buffer) => void (serverErrors += chunk.toString()))
const stop = () => {
  if (server.exitCode === null) server.kill("SIGTERM")
}
process.on("exit", () => {
  stop()
  fs.rmSync(scratch, { recursive: true, force: true })
})

for (;;) {
  if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode}): ${serverErrors}`)
  const up = await fetch(`${base}/v1/me`).then(() => true, () => false)
  if (up) break
  await sleep(100)
}
const readyMs = performance.now() - started
await sleep(5_000)
const idle = memory(server.pid!)
console.log(`server ready in ${(readyMs / 1000).toFixed(1)} s; idle RSS ${mb(idle.rss)}, start-up peak ${mb(idle.peak)}`)

const admin = (...args: Array<string>) => {
  const run = spawnSync(process.execPath, [...nodeArgs, "admin", ...args], { cwd: root, env, encoding: "utf8" })
  if (run.status !== 0) throw new Error(`admin ${args.join(" ")}: ${run.stderr}`)
  return JSON.parse(run.stdout) as Record<string, unknown>
}
const email = "bench@example.com"
admin("account", "create", "--email", email, "--api-access")
admin("credits", "grant", "--email", email, "--minutes", "100000")
const key = String(admin("key", "create", "--email", email).key)
const headers = { "X-API-Key": key }

const submit = async (file: string) => {
  const form = new FormData()
  form.append("file", new Blob([fs.readFileSync(file)], { type: "audio/wav" }), path.basename(file))
  const response = await fetch(`${base}/v1/transcribe`, { method: "POST", headers, body: form })
  const body = await response.json() as { job_id?: string }
  if (body.job_id === undefined) throw new Error(`submit answered ${response.status}: ${JSON.stringify(body)}`)
  return body.job_id
}
const status = async (id: string) => (await (await fetch(`${base}/v1/jobs/${id}`, { headers })).json() as { status: string }).status
const waitDone = async (id: string, limitMs: number) => {
  const until = performance.now() + limitMs
  for (let s = await status(id); s === "queued" || s === "processing"; s = await status(id)) {
    if (performance.now() > until) throw new Error(`job ${id} still ${s}`)
    await sleep(250)
  }
}

const shortJob = await submit(path.join(mediaDir, "a01_slt_budget.wav"))
await waitDone(shortJob, 120_000)
const afterJob = memory(server.pid!)
console.log(`after one short job: RSS ${mb(afterJob.rss)}, peak so far ${mb(afterJob.peak)}`)
if (flag("rss-only")) process.exit(0)

// ---------------------------------------------------------------- the bare server beside it

const routes = { job: `/v1/jobs/${shortJob}`, list: "/v1/jobs", me: "/v1/me" } as const
type Route = keyof typeof routes
const bodies = Object.fromEntries(
  await Promise.all(
    Object.entries(routes).map(async ([name, route]) => [name, await (await fetch(base + route, { headers })).text()] as const)
  )
) as Record<Route, string>
const barePort = await freePort()
const bareSource = `
const http = require("node:http")
const bodies = ${JSON.stringify(Object.fromEntries(Object.entries(routes).map(([name, route]) => [route, bodies[name as Route]])))}
http.createServer((req, res) => {
  const body = bodies[req.url] ?? "{}"
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}).listen(${barePort}, "127.0.0.1", () => process.send("ready"))
`
const bare = spawn(process.execPath, ["-e", bareSource], { stdio: ["ignore", "ignore", "inherit", "ipc"] })
process.on("exit", () => bare.kill())
await new Promise((resolve) => bare.once("message", resolve))
const bareBase = `http://127.0.0.1:${barePort}`

// ---------------------------------------------------------------- load

interface Sample {
  count: number
  errors: number
  readonly latencies: Array<number>
  elapsedMs: number
  /** CPU the server spent meanwhile (user + system, ms): the whole process, and its main thread. */
  cpuMs: number
  mainCpuMs: number
}
const emptySample = (): Sample => ({ count: 0, errors: 0, latencies: [], elapsedMs: 0, cpuMs: 0, mainCpuMs: 0 })

/**
 * CPU time (user + system, ms) from /proc: the server's processes (all threads and child
 * processes: HTTP loop, embedded database, pipeline workers) and its main thread (the HTTP event loop). Unlike rps, CPU per request
 * hardly moves with the load other work puts on the machine.
 */
const serverCpu = (pid: number) => ({ all: treeCpuMs(pid), main: cpuMsOf(`/proc/${pid}/task/${pid}/stat`) })

/** `connections` closed loops against one URL for `ms`, added into `into`. */
const load = async (url: string, ms: number, into: Sample, cpuPid?: number) => {
  const cpuBefore = cpuPid === undefined ? undefined : serverCpu(cpuPid)
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const target = new URL(url)
  const one = () =>
    new Promise<boolean>((resolve) => {
      const sent = performance.now()
      const req = http.get({ host: target.hostname, port: target.port, path: target.pathname, headers, agent }, (res) => {
        res.resume()
        res.on("end", () => {
          into.latencies.push(performance.now() - sent)
          resolve(res.statusCode === 200)
        })
      })
      req.on("error", () => resolve(false))
    })
  const begin = performance.now()
  const until = begin + ms
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < until) {
      if (await one()) into.count++
      else into.errors++
    }
  }))
  into.elapsedMs += performance.now() - begin
  if (cpuBefore !== undefined) {
    const cpuAfter = serverCpu(cpuPid!)
    into.cpuMs += cpuAfter.all - cpuBefore.all
    into.mainCpuMs += cpuAfter.main - cpuBefore.main
  }
  agent.destroy()
}

/** Requests at a fixed rate for `ms`, each on its own (open loop), added into `into`. */
const paced = async (url: string, ms: number, into: Sample) => {
  const agent = new http.Agent({ keepAlive: true })
  const target = new URL(url)
  const pending: Array<Promise<void>> = []
  const begin = performance.now()
  for (let i = 0; i < (ms / 1000) * rate; i++) {
    const due = begin + (i * 1000) / rate
    if (due > performance.now()) await sleep(due - performance.now())
    pending.push(new Promise<void>((resolve) => {
      const sent = performance.now()
      const req = http.get({ host: target.hostname, port: target.port, path: target.pathname, headers, agent }, (res) => {
        res.resume()
        res.on("end", () => {
          into.latencies.push(performance.now() - sent)
          if (res.statusCode === 200) into.count++
          else into.errors++
          resolve()
        })
      })
      req.on("error", () => {
        into.errors++
        resolve()
      })
    }))
  }
  await Promise.all(pending)
  into.elapsedMs += performance.now() - begin
  agent.destroy()
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const targets = Object.keys(routes) as Array<Route>
const row = (label: string, sample: Sample) => {
  const sorted = [...sample.latencies].sort((a, b) => a - b)
  const rps = sample.count / (sample.elapsedMs / 1000)
  return {
    label,
    rps,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    errors: sample.errors,
    latencies: sorted.length
  }
}
const report = (phase: string, results: Record<Route, { server: Sample; bare: Sample; paced: Sample }>) => {
  console.log(`\n${phase}`)
  console.log(`  at ${rate} requests/s per route (open loop):`)
  for (const name of targets) {
    const p = row(routes[name].replace(shortJob, "{id}"), results[name].paced)
    console.log(
      `  ${p.label.padEnd(21)} p50 ${p.p50.toFixed(1).padStart(6)} ms | p99 ${p.p99.toFixed(1).padStart(6)} ms | ` +
        `max ${p.max.toFixed(0).padStart(5)} ms | ${p.latencies} requests, ${p.errors} errors`
    )
  }
  console.log(`  saturated (${connections} connections, closed loop):`)
  console.log("  route                 |  rps   | p50 ms | p99 ms | max ms | errors || bare rps | bare p99 | rps ratio || CPU ms/request (main thread)")
  for (const name of targets) {
    const s = row(routes[name].replace(shortJob, "{id}"), results[name].server)
    const b = row("bare", results[name].bare)
    console.log(
      `  ${s.label.padEnd(21)} | ${s.rps.toFixed(0).padStart(6)} | ${s.p50.toFixed(1).padStart(6)} | ${s.p99.toFixed(1).padStart(6)} | ` +
        `${s.max.toFixed(0).padStart(6)} | ${String(s.errors).padStart(6)} || ${b.rps.toFixed(0).padStart(8)} | ${b.p99.toFixed(1).padStart(8)} | ` +
        `${((100 * s.rps) / b.rps).toFixed(0).padStart(8)} % || ` +
        `${(results[name].server.cpuMs / results[name].server.count).toFixed(2)} ` +
        `(${(results[name].server.mainCpuMs / results[name].server.count).toFixed(2)})`
    )
  }
}
const freshResults = () =>
  Object.fromEntries(targets.map((name) => [name, { server: emptySample(), bare: emptySample(), paced: emptySample() }])) as Record<
    Route,
    { server: Sample; bare: Sample; paced: Sample }
  >

// Warm-up, not counted: the first closed loop otherwise pays for the JIT and first-use caches.
for (const name of targets) await load(base + routes[name], 2_000, emptySample())

const idleResults = freshResults()
for (const name of targets) {
  await load(base + routes[name], seconds * 1000, idleResults[name].server, server.pid!)
  await load(bareBase + routes[name], seconds * 1000, idleResults[name].bare)
  await paced(base + routes[name], seconds * 1000, idleResults[name].paced)
}
report(`idle (${seconds} s per target and kind)`, idleResults)

// ---------------------------------------------------------------- while a long file transcribes

const clips = ["a08_interview_three_speakers.wav", "a05_dialogue_slt_kal.wav", "a04_ked_podcast.wav", "a02_kal_weather.wav", "a01_slt_budget.wav"]
const clipSamples = clips.map((file) => readWavPcm16(path.join(mediaDir, file)).samples)
const wanted = minutes * 60 * 16_000
const recording = new Float32Array(wanted)
for (let at = 0, i = 0; at < wanted; i++) {
  const clip = clipSamples[i % clipSamples.length]!.subarray(0, wanted - at)
  recording.set(clip, at)
  at += clip.length
}
const longFile = path.join(scratch, "long.wav")
writeWav(longFile, recording)

const longJob = await submit(longFile)
const busyStart = performance.now()
while ((await status(longJob)) === "queued") await sleep(100)
const busyResults = freshResults()
let rounds = 0
busy: for (;;) {
  for (const name of targets) {
    if ((await status(longJob)) !== "processing" || performance.now() - busyStart > busyLimitMs) break busy
    await load(base + routes[name], 2_000, busyResults[name].server, server.pid!)
    await load(bareBase + routes[name], 2_000, busyResults[name].bare)
    await paced(base + routes[name], 2_000, busyResults[name].paced)
  }
  rounds++
}
const busyMs = performance.now() - busyStart
report(`while a ${minutes}-minute file transcribes (${rounds} rounds of 2 s slices, ${(busyMs / 1000).toFixed(0)} s)`, busyResults)
await waitDone(longJob, 600_000)
const end = memory(server.pid!)
console.log(`\nlong job: ${((performance.now() - busyStart) / 1000).toFixed(0)} s from submit to done; server RSS now ${mb(end.rss)}, peak ${mb(end.peak)}`)
console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")} (${os.cpus().length} cores)`)
process.exit(0)
