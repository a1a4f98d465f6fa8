/**
 * `verbatim doctor`: checks what the service needs on this machine and prints what to fix.
 * - ffmpeg: native `ffmpeg` on PATH and the bundled WASM build (`VERBATIM_DECODER` says which must work);
 * - models: the configured model's files present with their sha256 checksums; other known models listed;
 * - database: reachable, schema migrations applied (opening it applies pending ones, as `serve` does);
 * - disk: free space where data lives;
 * - ports: the API port and the job runner's port free to listen on — unless a Verbatim already
 *   answers on the API port: then that running service is checked instead (its `/readyz`:
 *   ready, database, models, workers, disk), and the ports it holds are as they should be.
 * Exit status 0 when every check passes, 1 otherwise. `--json` prints the checks as JSON.
 */
import { Console, Context, Effect, Layer } from "effect"
import { Command, Flag } from "effect/cli"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as path from "node:path"
import { nativeFfmpegAvailable } from "../../pipeline/media/FfmpegNative.ts"
import { ModelRegistry } from "../../pipeline/models/ModelRegistry.ts"
import { DatabaseConfig } from "../../services/config/DatabaseConfig.ts"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { SpeechConfig } from "../../services/config/SpeechConfig.ts"
import { StorageConfig } from "../../services/config/StorageConfig.ts"
import { migrations } from "../../services/db/Migrations.ts"
import { minFreeBytes } from "../../services/ops/Readiness.ts"

export interface DoctorCheck {
  readonly check: string
  readonly ok: boolean
  readonly detail: string
  /** What to do about it, when not ok (or worth knowing). */
  readonly fix?: string
}

const sha256Of = (file: string) =>
  new Promise<string>((resolve, reject) => {
    const hash = createHash("sha256")
    fs.createReadStream(file).on("data", (chunk) => hash.update(chunk)).on("error", reject).on("end", () =>
      resolve(hash.digest("hex"))
    )
  })

const portFree = (host: string, port: number) =>
  new Promise<string | undefined>((resolve) => {
    const server = net.createServer()
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
    server.listen({ host, port }, () => server.close(() => resolve(undefined)))
  })

/** One check of a running Verbatim's `/readyz` answer (services/ops/Readiness.ts). */
interface ReadyCheck {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

/**
 * The `/readyz` checks of a Verbatim listening on `host:port`, or undefined when what listens
 * there (if anything) does not answer like one. Both the 200 and the 503 answer carry `checks`.
 */
const runningService = (host: string, port: number) => {
  const address = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host
  const url = `http://${address.includes(":") ? `[${address}]` : address}:${port}`
  return Effect.promise(async () => {
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) })
      const body = await response.json() as { readonly checks?: unknown }
      if (!Array.isArray(body.checks)) return undefined
      const checks = body.checks.filter((c): c is ReadyCheck =>
        typeof c === "object" && c !== null && typeof c.name === "string" && typeof c.ok === "boolean" && typeof c.detail === "string"
      )
      return checks.length === 0 ? undefined : { url, ready: response.status === 200, checks }
    } catch {
      return undefined
    }
  })
}

const wasmPresent = () => {
  try {
    createRequire(import.meta.url).resolve("@ffmpeg/core/wasm")
    return true
  } catch {
    return false
  }
}

export const doctorCommand = <E, R>(database: Layer.Layer<SqlClient.SqlClient, E, R>) =>
  Command.make(
    "doctor",
    { json: Flag.Boolean("json").pipe(Flag.withDescription("Print the checks as JSON"), Flag.withDefault(false)) },
    Effect.fn(function*({ json }) {
      const config = { ...(yield* DatabaseConfig), ...(yield* ServerConfig), ...(yield* SpeechConfig), ...(yield* StorageConfig) }
      const registry = yield* ModelRegistry
      const checks: Array<DoctorCheck> = []

      const native = nativeFfmpegAvailable()
      const wasm = wasmPresent()
      const decoderOk = config.decoder === "native" ? native : config.decoder === "wasm" ? wasm : native || wasm
      checks.push({
        check: "ffmpeg",
        ok: decoderOk,
        detail: `native ${native ? "found" : "not on PATH"}, WASM ${wasm ? "bundled" : "missing"}; VERBATIM_DECODER=${config.decoder}`,
        ...(decoderOk
          ? native ? {} : { fix: "optional: install ffmpeg for faster decoding (apt install ffmpeg)" }
          : { fix: native || wasm ? "set VERBATIM_DECODER=auto" : "install ffmpeg, or reinstall dependencies (npm ci) for @ffmpeg/core" })
      })

      for (const spec of registry.specs) {
        const dir = path.resolve(config.modelsDir, spec.folder)
        const problems: Array<string> = []
        for (const file of spec.files) {
          const target = path.join(dir, file.file)
          const stat = yield* Effect.promise(() => fsp.stat(target).catch(() => undefined))
          if (stat === undefined) problems.push(`${file.file} missing`)
          else if (stat.size !== file.bytes) problems.push(`${file.file} has ${stat.size} bytes, expected ${file.bytes}`)
          else if ((yield* Effect.promise(() => sha256Of(target))) !== file.sha256) problems.push(`${file.file} checksum differs`)
        }
        const chosen = spec.name === config.model
        checks.push({
          check: `model ${spec.name}`,
          ok: problems.length === 0 || !chosen,
          detail: problems.length === 0
            ? `present in ${dir}, checksums match`
            : `${problems.join("; ")}${chosen ? "" : " (not the configured model)"}`,
          ...(problems.length === 0 ? {} : { fix: `verbatim models pull ${spec.name}` })
        })
      }

      const known = Object.keys(yield* migrations).length
      const database_ = yield* Effect.scoped(
        Effect.gen(function*() {
          const context = yield* Layer.build(database)
          const sql = Context.get(context, SqlClient.SqlClient)
          const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM verbatim_migrations`
          return rows[0]?.n ?? 0
        })
      ).pipe(Effect.result)
      checks.push(
        database_._tag === "Success"
          ? {
            check: "database",
            ok: database_.success >= known,
            detail: `reachable (${config.databaseUrl._tag === "Some" ? "DATABASE_URL" : `embedded in ${config.dataDir}/pg`}), ` +
              `${database_.success} of ${known} migrations applied`
          }
          : {
            check: "database",
            ok: false,
            detail: `not usable: ${String(database_.failure).split("\n")[0]}`,
            fix: config.databaseUrl._tag === "Some"
              ? "check DATABASE_URL (host, credentials, Postgres 15 or newer)"
              : `check ${config.dataDir} is writable and no other Verbatim process uses it`
          }
      )

      const probeDir = fs.existsSync(config.dataDir) ? config.dataDir : path.dirname(path.resolve(config.dataDir))
      const stats = yield* Effect.promise(() => fsp.statfs(probeDir).catch(() => undefined))
      const free = stats === undefined ? 0 : stats.bavail * stats.bsize
      checks.push({
        check: "disk",
        ok: free >= minFreeBytes,
        detail: `${Math.floor(free / 1024 / 1024)} MB free at ${probeDir}`,
        ...(free >= minFreeBytes ? {} : { fix: `free space or point VERBATIM_DATA_DIR elsewhere (needs ${minFreeBytes / 1024 / 1024} MB)` })
      })

      // A busy API port may be this very service, running: then check it rather than the port.
      const apiBusy = config.port === 0 ? undefined : yield* Effect.promise(() => portFree(config.host, config.port))
      const running = apiBusy === undefined ? undefined : yield* runningService(config.host, config.port)
      if (running !== undefined) {
        const failing = running.checks.filter((c) => !c.ok)
        checks.push({
          check: "service",
          ok: running.ready,
          detail: running.ready
            ? `Verbatim is running at ${running.url} and ready`
            : `Verbatim is running at ${running.url} but not ready: ${failing.map((c) => c.name).join(", ")}`,
          ...(running.ready ? {} : { fix: "see the failing service checks below (its log has more)" })
        })
        for (const c of running.checks) checks.push({ check: `service ${c.name}`, ok: c.ok, detail: c.detail })
      }

      for (const [name, variable, port] of [["API", "VERBATIM_PORT", config.port], ["job runner", "VERBATIM_RUNNER_PORT", config.runnerPort]] as const) {
        const busy = port === 0 ? undefined : port === config.port ? apiBusy : yield* Effect.promise(() => portFree(config.host, port))
        if (busy !== undefined && running !== undefined) {
          checks.push({ check: `port ${port}`, ok: true, detail: `${name} port in use, as expected while Verbatim runs (${busy})` })
          continue
        }
        checks.push({
          check: `port ${port}`,
          ok: busy === undefined,
          detail: busy === undefined ? `${name} port free on ${config.host}` : `${name} port on ${config.host}: ${busy}`,
          ...(busy === undefined ? {} : { fix: `stop what listens there (a running Verbatim?) or set ${variable}` })
        })
      }

      const ok = checks.every((c) => c.ok)
      if (json) yield* Console.log(JSON.stringify({ ok, checks }, null, 2))
      else {
        for (const c of checks) {
          yield* Console.log(`${c.ok ? "ok  " : "FAIL"}  ${c.check.padEnd(24)} ${c.detail}${c.fix === undefined ? "" : `\n      → ${c.fix}`}`)
        }
        yield* Console.log(ok ? "\nAll checks passed." : "\nSome checks failed; see → for what to do.")
      }
      if (!ok) process.exitCode = 1
    })
  ).pipe(Command.withDescription("Check ffmpeg, models, database, disk and ports (or the running service), and say what to fix"))
