/**
 * Embedded Postgres: PGlite (with pgvector) on a persistent data directory, served over a
 * unix socket by pglite-socket so the rest of the service talks plain Postgres protocol
 * through `@effect/sql-pg`, exactly as it does against a real server. Both run in a
 * child process of their own (embeddedPostgresWorker.ts; a worker thread under Deno), off the
 * HTTP event loop.
 *
 * One process owns a data directory. A second process pointed at the same directory (the
 * admin CLI while the server runs) finds the owner's socket alive and connects to it
 * instead of opening the files twice, which PGlite cannot survive. The owner's pid is kept
 * beside the socket: a database process whose owner was killed outlives it for the moment
 * it takes to close, and the next opener waits for it instead of visiting it.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fork } from "node:child_process"
import { Worker } from "node:worker_threads"
import type { EmbeddedPostgresWorkerData, FromEmbeddedPostgres, ToEmbeddedPostgres } from "./embeddedPostgresWorker.ts"

/** How long a stopping database process may take to flush and close before it is killed. */
const stopTimeoutMs = 30_000

export class EmbeddedPostgresError extends Schema.TaggedError<EmbeddedPostgresError>()("EmbeddedPostgresError", {
  dataDir: Schema.String,
  cause: Schema.Defect()
}) {
  override get message() {
    return `Could not open the embedded database in ${this.dataDir}: ${String(this.cause)}`
  }
}

/**
 * The socket lives under the temp dir, named after the data dir: unix socket paths are
 * limited to ~100 bytes, and every process must derive the same path from the same dir.
 */
export const socketPathFor = (dataDir: string): string => {
  const absolute = path.resolve(dataDir)
  const digest = createHash("sha256").update(absolute).digest("hex").slice(0, 16)
  return path.join(os.tmpdir(), `verbatim-pg-${digest}`, ".s.PGSQL.5432")
}

const socketAlive = (socketPath: string) =>
  Effect.callback<boolean>((resume) => {
    const socket = net.connect({ path: socketPath })
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => resume(Effect.succeed(false)))
  })

/** The pid of the process that owns the database behind `socketPath` (written by the owner). */
const ownerFileFor = (socketPath: string) => path.join(path.dirname(socketPath), "owner.pid")
/** The pid of the database process, from before it opens the directory until it closed it. */
const databaseFileFor = (socketPath: string) => path.join(path.dirname(socketPath), "database.pid")

/** The pid recorded in `file`, if any (a missing or unreadable file records none). */
const recordedPid = (file: string): number | undefined => {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, "utf8"), 10)
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/** Alive and not a zombie: where PID 1 does not reap, an exited orphan lingers as one (Linux). */
const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (cause) {
    return (cause as NodeJS.ErrnoException).code === "EPERM"
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    return true
  }
}

/**
 * False only when the recorded owner is known to be gone. No record counts as alive:
 * visiting is the safe default for a live socket.
 */
const ownerAlive = (socketPath: string): boolean => {
  const pid = recordedPid(ownerFileFor(socketPath))
  return pid === undefined || pid === process.pid || processAlive(pid)
}

/** A database process of an earlier owner still has the directory open. */
const previousDatabaseOpen = (socketPath: string): boolean => {
  const pid = recordedPid(databaseFileFor(socketPath))
  return pid !== undefined && pid !== process.pid && processAlive(pid)
}

/** The database's own program: a child process on Node, a worker thread under Deno. */
interface DatabaseProcess {
  readonly send: (message: ToEmbeddedPostgres) => void
  readonly onMessage: (listener: (message: FromEmbeddedPostgres) => void) => void
  readonly onceExit: (listener: (code: number | null) => void) => () => void
  readonly onceError: (listener: (error: Error) => void) => () => void
  readonly kill: () => void
  readonly exited: () => boolean
}

const underDeno = "Deno" in globalThis
const workerUrl = new URL("./embeddedPostgresWorker.ts", import.meta.url)

const startDatabaseProcess = (settings: EmbeddedPostgresWorkerData): DatabaseProcess => {
  if (underDeno) {
    const worker = new Worker(workerUrl, { workerData: settings })
    let exited = false
    worker.once("exit", () => void (exited = true))
    return {
      send: (message) => worker.postMessage(message),
      onMessage: (listener) => void worker.on("message", listener),
      onceExit: (listener) => {
        worker.once("exit", listener)
        return () => void worker.off("exit", listener)
      },
      onceError: (listener) => {
        worker.once("error", listener)
        return () => void worker.off("error", listener)
      },
      kill: () => void worker.terminate(),
      exited: () => exited
    }
  }
  const child = fork(workerUrl, [JSON.stringify(settings)], {
    execArgv: ["--experimental-strip-types", "--disable-warning=ExperimentalWarning"],
    // Its own stdout/stderr pipes, not the parent's: a supervisor waiting for the server's
    // output to close is not kept waiting by the database process.
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    serialization: "json"
  })
  const forward = (chunk: Buffer) => void process.stderr.write(chunk)
  child.stdout?.on("data", forward)
  child.stderr?.on("data", forward)
  return {
    send: (message) => {
      if (child.connected) child.send(message)
    },
    onMessage: (listener) => void child.on("message", listener),
    onceExit: (listener) => {
      const onExit = (code: number | null) => listener(code)
      child.once("exit", onExit)
      return () => void child.off("exit", onExit)
    },
    onceError: (listener) => {
      child.once("error", listener)
      return () => void child.off("error", listener)
    },
    kill: () => void child.kill("SIGKILL"),
    exited: () => child.exitCode !== null || child.signalCode !== null
  }
}

export interface EmbeddedPostgresShape {
  readonly socketPath: string
  /** False when another process owns the data directory and this one is its client. */
  readonly owner: boolean
}

export class EmbeddedPostgres extends Context.Service<EmbeddedPostgres, EmbeddedPostgresShape>()(
  "verbatim/db/EmbeddedPostgres"
) {
  static readonly layer = (options: { readonly dataDir: string }) =>
    Layer.effect(
      EmbeddedPostgres,
      Effect.gen(function*() {
        const dataDir = path.resolve(options.dataDir)
        const socketPath = socketPathFor(dataDir)
        if ((yield* socketAlive(socketPath)) && ownerAlive(socketPath)) {
          return EmbeddedPostgres.of({ socketPath, owner: false })
        }
        // An owner that was killed leaves its database process closing the files: wait for it.
        yield* Effect.gen(function*() {
          while (previousDatabaseOpen(socketPath)) yield* Effect.sleep("50 millis")
        }).pipe(
          Effect.timeoutOrElse({
            duration: stopTimeoutMs,
            orElse: () =>
              Effect.fail(new EmbeddedPostgresError({ dataDir, cause: "the database process of an owner that is gone did not close" }))
          })
        )
        const fail = (cause: unknown) => new EmbeddedPostgresError({ dataDir, cause })
        yield* Effect.try({
          try: () => {
            fs.mkdirSync(dataDir, { recursive: true })
            fs.mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 })
            fs.rmSync(socketPath, { force: true })
          },
          catch: fail
        })
        // PGlite and its socket server run in a process of their own (embeddedPostgresWorker.ts):
        // its WASM costs ~0.4 ms of CPU per query, which on the HTTP event loop every request
        // waited behind. Released by asking it to stop (PGlite flushes and closes its files),
        // killed if it has not ended after `stopTimeoutMs`.
        yield* Effect.acquireRelease(
          Effect.callback<DatabaseProcess, EmbeddedPostgresError>((resume) => {
            const database = startDatabaseProcess({ dataDir, socketPath })
            const offExit = database.onceExit((code) => resume(Effect.fail(fail(`the database process exited (code ${code}) before it was ready`))))
            const offError = database.onceError((error) => resume(Effect.fail(fail(error))))
            let settled = false
            database.onMessage((message) => {
              if (settled) return
              settled = true
              offExit()
              offError()
              if (message._tag === "Ready") {
                fs.writeFileSync(ownerFileFor(socketPath), String(process.pid))
                resume(Effect.succeed(database))
              } else if (message._tag === "Failed") resume(Effect.fail(fail(message.message)))
            })
          }),
          (database) =>
            Effect.callback<void>((resume) => {
              const cleanUp = () => {
                fs.rmSync(socketPath, { force: true })
                fs.rmSync(ownerFileFor(socketPath), { force: true })
                resume(Effect.void)
              }
              if (database.exited()) return cleanUp()
              const kill = setTimeout(database.kill, stopTimeoutMs)
              database.onceExit(() => {
                clearTimeout(kill)
                cleanUp()
              })
              database.send({ _tag: "Stop" })
            })
        )
        return EmbeddedPostgres.of({ socketPath, owner: true })
      })
    )
}
