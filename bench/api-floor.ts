/**
 * What the stack itself costs per request, beside `bench/api.ts`: the same closed loop (8
 * keep-alive connections) against four servers in one run, each a process of its own:
 *
 *   bare       node:http answering a fixed JSON body (bench/api.ts's reference)
 *   effect     an Effect HttpApi server (the platform's Node server, one GET endpoint with a path
 *              parameter and a Schema-encoded answer of the same size), no database
 *   effect-db  the same, plus one `SELECT` per request through @effect/sql-pg on the embedded
 *              database's socket (EmbeddedPostgres: PGlite in a child process, pool of one)
 *   verbatim   is not started here: bench/api.ts measures the real routes
 *
 * It prints rps, p50/p99, CPU ms per request (the server's whole process tree) and the ratio to
 * bare, so the issue 15 target (≥ 50 % of bare) can be read against what an Effect HttpApi route
 * and one embedded query cost before any of our code runs.
 *
 *   npx node bench/api-floor.ts [--seconds 5] [--rounds 2]
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { treeCpuMs } from "./ProcessTree.ts"

const argv = process.argv.slice(2)
const arg = (name: string, fallback: number) => {
  const at = argv.indexOf(`--${name}`)
  return at >= 0 ? Number(argv[at + 1]) : fallback
}
const role = argv[argv.indexOf("--serve") + 1]

/** About the size of a job resource. */
const answer = {
  job_id: "6f1c2a4e-8f0b-4c7e-9a51-3d2b7c9e0f11",
  status: "done",
  progress: 100,
  queue_position: 0,
  filename: "interview-2026-11-02.mp3",
  audio_duration_seconds: 623.4,
  language: "en",
  source: "upload",
  speech_detected: true,
  speech_ratio: 0.668,
  locked: false,
  created_at: 1795413043,
  completed_at: 1795413067,
  error: null,
  diarization: null
}

const serveBare = () => {
  const body = JSON.stringify(answer)
  const server = http.createServer((_, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
  server.listen(0, "127.0.0.1", () => console.log(`port ${(server.address() as { port: number }).port}`))
}

const serveEffect = async (withDatabase: boolean) => {
  const { NodeHttpServer, NodeRuntime } = await import("@effect/platform-node")
  const { PgClient } = await import("@effect/sql-pg")
  const { Effect, Layer, Schema } = await import("effect")
  const { SqlClient } = await import("effect/sql")
  const { HttpRouter } = await import("effect/http")
  const { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } = await import("effect/http-api")
  const { EmbeddedPostgres } = await import("../services/db/EmbeddedPostgres.ts")

  const Job = Schema.Struct({
    job_id: Schema.String,
    status: Schema.String,
    progress: Schema.Number,
    queue_position: Schema.Int,
    filename: Schema.String,
    audio_duration_seconds: Schema.Number,
    language: Schema.NullOr(Schema.String),
    source: Schema.String,
    speech_detected: Schema.Boolean,
    speech_ratio: Schema.Number,
    locked: Schema.Boolean,
    created_at: Schema.Int,
    completed_at: Schema.NullOr(Schema.Int),
    error: Schema.NullOr(Schema.String),
    diarization: Schema.NullOr(Schema.String)
  })
  class Jobs extends HttpApiGroup.make("jobs").add(
    HttpApiEndpoint.get("get", "/v1/jobs/:id", { params: { id: Schema.String }, success: Job })
  ) {}
  class Api extends HttpApi.make("floor").add(Jobs) {}

  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-bench-floor-"))
  const Database = Layer.unwrap(
    Effect.map(EmbeddedPostgres, ({ socketPath }) =>
      PgClient.layer({ path: socketPath, database: "postgres", username: "postgres", maxConnections: 1 }))
  ).pipe(Layer.provide(EmbeddedPostgres.layer({ dataDir: scratch })))

  const plain = HttpApiBuilder.group(Api, "jobs", (handlers) =>
    handlers.handle("get", ({ params }) => Effect.succeed({ ...answer, job_id: params.id })))
  const queried = HttpApiBuilder.group(Api, "jobs", (handlers) =>
    handlers.handle("get", ({ params }) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ id: string }>`SELECT ${params.id}::text AS id`.pipe(Effect.orDie)
        return { ...answer, job_id: row!.id }
      })))

  // As the service (layers/App.ts): without the platform's console line per request, which
  // alone cost more than the route (an earlier version of this bench kept it).
  const quiet = { disableLogger: true, disableListenLog: true }
  const server = http.createServer()
  const Listening = NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" })
  server.once("listening", () => console.log(`port ${(server.address() as { port: number }).port}`))
  if (withDatabase) {
    const App = HttpRouter.serve(HttpApiBuilder.layer(Api).pipe(Layer.provide(queried)), quiet).pipe(
      Layer.provide(Listening),
      Layer.provide(Database)
    )
    Layer.launch(App).pipe(NodeRuntime.runMain)
  } else {
    Layer.launch(HttpRouter.serve(HttpApiBuilder.layer(Api).pipe(Layer.provide(plain)), quiet).pipe(Layer.provide(Listening))).pipe(
      NodeRuntime.runMain
    )
  }
}

if (role === "bare") serveBare()
else if (role === "effect") await serveEffect(false)
else if (role === "effect-db") await serveEffect(true)
else await main()

async function main() {
  const seconds = arg("seconds", 5)
  const rounds = arg("rounds", 2)
  const connections = arg("connections", 8)
  const roles = ["bare", "effect", "effect-db"] as const

  const start = (name: string) =>
    new Promise<{ child: ChildProcess; port: number }>((resolve, reject) => {
      const child = spawn(process.execPath, [import.meta.filename, "--serve", name], { stdio: ["ignore", "pipe", "inherit"] })
      let out = ""
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString()
        const port = /port (\d+)/.exec(out)?.[1]
        if (port !== undefined) resolve({ child, port: Number(port) })
      })
      child.once("exit", (code) => reject(new Error(`${name} exited (${code}) before listening`)))
    })

  const cpuMs = treeCpuMs

  const load = async (port: number, ms: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
    const latencies: Array<number> = []
    let errors = 0
    let n = 0
    const one = () =>
      new Promise<boolean>((resolve) => {
        const sent = performance.now()
        const req = http.get({ host: "127.0.0.1", port, path: `/v1/jobs/job-${n++}`, agent }, (res) => {
          res.resume()
          res.on("end", () => {
            latencies.push(performance.now() - sent)
            resolve(res.statusCode === 200)
          })
        })
        req.on("error", () => resolve(false))
      })
    const begin = performance.now()
    await Promise.all(Array.from({ length: connections }, async () => {
      while (performance.now() < begin + ms) if (!(await one())) errors++
    }))
    agent.destroy()
    latencies.sort((a, b) => a - b)
    const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0
    return { count: latencies.length - errors, errors, elapsedMs: performance.now() - begin, p50: pick(0.5), p99: pick(0.99) }
  }

  const servers = new Map<string, { child: ChildProcess; port: number }>()
  process.on("exit", () => {
    for (const { child } of servers.values()) child.kill()
  })
  for (const name of roles) servers.set(name, await start(name))
  const results = new Map<string, Array<{ rps: number; p50: number; p99: number; cpu: number; errors: number }>>()
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? roles : [...roles].reverse()) {
      const { child, port } = servers.get(name)!
      await load(port, 1000) // warm-up, uncounted
      const cpuBefore = cpuMs(child.pid!)
      const sample = await load(port, seconds * 1000)
      const cpu = (cpuMs(child.pid!) - cpuBefore) / Math.max(1, sample.count)
      results.set(name, [...(results.get(name) ?? []), { rps: sample.count / (sample.elapsedMs / 1000), p50: sample.p50, p99: sample.p99, cpu, errors: sample.errors }])
    }
  }
  const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const bareRps = median(results.get("bare")!.map((r) => r.rps))
  console.log(`closed loop, ${connections} connections, ${seconds} s × ${rounds} rounds (medians); load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`)
  console.log("server      |    rps | p50 ms | p99 ms | CPU ms/request | errors | rps / bare")
  for (const name of roles) {
    const rs = results.get(name)!
    const rps = median(rs.map((r) => r.rps))
    console.log(
      `${name.padEnd(11)} | ${rps.toFixed(0).padStart(6)} | ${median(rs.map((r) => r.p50)).toFixed(1).padStart(6)} | ` +
        `${median(rs.map((r) => r.p99)).toFixed(1).padStart(6)} | ${median(rs.map((r) => r.cpu)).toFixed(3).padStart(14)} | ` +
        `${String(rs.reduce((s, r) => s + r.errors, 0)).padStart(6)} | ${((100 * rps) / bareRps).toFixed(0).padStart(8)} %`
    )
  }
  process.exit(0)
}
