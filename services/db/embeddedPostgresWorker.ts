/**
 * The embedded database's own process (EmbeddedPostgres.ts): PGlite (with pgvector) on the data
 * directory and the pglite-socket server in front of it, so PGlite's WASM and the protocol work
 * of every query run here and not on the HTTP event loop. The parent only talks Postgres
 * protocol to the unix socket, as it would to a real server.
 *
 * It runs as a child process on Node (forked with an IPC channel) and as a worker thread under
 * Deno. Not a thread on Node: V8 shares compiled WebAssembly between the isolates of a process,
 * and a second isolate running PGlite (or Node's own WASM type stripper) beside the first
 * crashed the process with SIGSEGV in V8's wasm code cache, seen once in CI.
 *
 * As a process it keeps its pid in `database.pid` beside the socket from before it opens the
 * directory until it has closed it, so a new owner never opens the files while a database
 * process of a killed owner is still flushing them.
 *
 * Messages: from the parent `{ _tag: "Stop" }` (or the IPC channel closing: the parent died),
 * answered by stopping the socket server, closing the database (PGlite flushes its files),
 * `{ _tag: "Stopped" }` and exit; to the parent `{ _tag: "Ready" }` or `{ _tag: "Failed", message }`.
 * Its settings come in `workerData` (thread) or as JSON in the first argument (process).
 *
 * Plain promises, not Effect: this file is the program's whole body, a bridge to two
 * promise-based libraries, with the parent's layer owning its lifetime.
 */
import { PGlite } from "@electric-sql/pglite"
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect"
import { vector } from "@electric-sql/pglite-pgvector"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parentPort, workerData } from "node:worker_threads"
import { sharedBuffersMb } from "./bufferCache.ts"

export interface EmbeddedPostgresWorkerData {
  readonly dataDir: string
  readonly socketPath: string
}

export type FromEmbeddedPostgres =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Failed"; readonly message: string }
  | { readonly _tag: "Stopped" }

export type ToEmbeddedPostgres = { readonly _tag: "Stop" }

interface Channel {
  readonly send: (message: FromEmbeddedPostgres) => void
  readonly onStop: (stop: () => void) => void
  readonly close: () => void
}

const channel: Channel = parentPort !== null
  ? {
    send: (message) => parentPort!.postMessage(message),
    onStop: (stop) =>
      parentPort!.on("message", (message: ToEmbeddedPostgres) => {
        if (message._tag === "Stop") stop()
      }),
    // Deno's parentPort has no close(); its worker scope does.
    close: () =>
      typeof parentPort!.close === "function"
        ? parentPort!.close()
        : (globalThis as { close?: () => void }).close?.()
  }
  : {
    send: (message) => {
      if (process.connected) process.send!(message)
    },
    onStop: (stop) => {
      process.on("message", (message: ToEmbeddedPostgres) => {
        if (message._tag === "Stop") stop()
      })
      // The parent died (even by SIGKILL): the channel closes and the database goes with it.
      process.on("disconnect", stop)
      // Ctrl-C reaches the whole process group; the parent decides when the database stops.
      process.on("SIGINT", () => undefined)
      process.on("SIGTERM", stop)
    },
    close: () => process.exit(0)
  }

const { dataDir, socketPath } = (parentPort !== null
  ? workerData
  : JSON.parse(process.argv[2] ?? "{}")) as EmbeddedPostgresWorkerData

let db: PGlite | undefined
let server: PGLiteSocketServer | undefined
let stopping: Promise<void> | undefined

// While this file names a live process, the data directory is open: the next owner waits for it.
const pidFile = path.join(path.dirname(socketPath), "database.pid")

/** Bytes of the files under `dir` (0 when it does not exist yet). */
const bytesUnder = (dir: string): number => {
  if (!fs.existsSync(dir)) return 0
  let total = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size
  }
  return total
}

const stop = () =>
  stopping ??= (async () => {
    await server?.stop().catch(() => undefined)
    fs.rmSync(socketPath, { force: true })
    await db?.close().catch(() => undefined)
    if (parentPort === null) fs.rmSync(pidFile, { force: true })
  })()

channel.onStop(() => {
  void stop().finally(() => {
    channel.send({ _tag: "Stopped" })
    channel.close()
  })
})

/** Messages that leave an extended-protocol query open: Parse, Bind, Describe, Execute, Close, Flush. */
const OPENING = new Set(["P", "B", "D", "E", "C", "H"].map((c) => c.charCodeAt(0)))

/**
 * The database as the socket server's queue sees it. pglite-socket (0.2.17) queues every protocol
 * message by itself, in arrival order across clients, and keeps one client's messages together
 * only while `isInTransaction()` says so. A client's extended-protocol query (Parse … Execute,
 * then Sync) arriving in more than one read let another client's query run between its Bind and
 * its Execute; that query's Sync closed the unnamed portal and the first client's Execute failed
 * with `portal "" does not exist` (seen once in CI: the admin CLI granting minutes while the
 * server polled its jobs; test/foundation/embedded-postgres.test.ts cuts a query there). So
 * `isInTransaction()` also says yes from a query's first message until its Sync, and the queue
 * serves that client's messages first. The queue's clean-up for a client that leaves mid-query
 * runs `exec("ROLLBACK")`, which closes the query here too.
 */
const wholeQueries = (database: PGlite): PGlite => {
  let open = false
  return new Proxy(database, {
    get(target, key) {
      if (key === "isInTransaction") return () => open || target.isInTransaction()
      if (key === "execProtocolRawStream") {
        return async (message: Uint8Array, options: Parameters<PGlite["execProtocolRawStream"]>[1]) => {
          open = OPENING.has(message[0]!)
          return target.execProtocolRawStream(message, options)
        }
      }
      if (key === "exec") {
        return (...args: Parameters<PGlite["exec"]>) => {
          open = false
          return target.exec(...args)
        }
      }
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === "function" ? value.bind(target) : value
    }
  })
}

try {
  if (parentPort === null) fs.writeFileSync(pidFile, String(process.pid))
  // The cache sized to the data (bufferCache.ts); pageinspect: `BufferPrewarm` reads relations
  // into it with `get_raw_page` (PGlite ships no pg_prewarm).
  db = await PGlite.create({
    dataDir,
    extensions: { vector, pageinspect },
    startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffersMb(bytesUnder(path.join(dataDir, "base")), os.totalmem())}MB`]
  })
  // The parent's pool of one, a visiting admin CLI, and headroom for the liveness probe of the
  // next visitor, which the server only forgets a tick after it closed. Queries are still run
  // one at a time by the server's queue, each kept whole (`wholeQueries`).
  server = new PGLiteSocketServer({ db: wholeQueries(db), path: socketPath, maxConnections: 4 })
  await server.start()
  channel.send({ _tag: "Ready" })
} catch (cause) {
  await stop()
  channel.send({ _tag: "Failed", message: cause instanceof Error ? cause.message : String(cause) })
  channel.close()
}
