/**
 * The embedded database's own thread (EmbeddedPostgres.ts): PGlite (with pgvector) on the data
 * directory and the pglite-socket server in front of it, so PGlite's WASM and the protocol work
 * of every query run here and not on the HTTP event loop. The parent only talks Postgres
 * protocol to the unix socket, as it would to a real server.
 *
 * Messages: in `workerData` { dataDir, socketPath }; to the parent `{ _tag: "Ready" }` or
 * `{ _tag: "Failed", message }`; from the parent `{ _tag: "Stop" }`, answered by stopping the
 * socket server, closing the database (PGlite flushes its files) and `{ _tag: "Stopped" }`.
 *
 * Plain promises, not Effect: this file is the thread's whole program, a bridge to two
 * promise-based libraries, with the parent's layer owning its lifetime.
 */
import { PGlite } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import * as fs from "node:fs"
import { parentPort, workerData } from "node:worker_threads"

export interface EmbeddedPostgresWorkerData {
  readonly dataDir: string
  readonly socketPath: string
}

export type FromEmbeddedPostgres =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Failed"; readonly message: string }
  | { readonly _tag: "Stopped" }

export type ToEmbeddedPostgres = { readonly _tag: "Stop" }

const port = parentPort!
const { dataDir, socketPath } = workerData as EmbeddedPostgresWorkerData
const send = (message: FromEmbeddedPostgres) => port.postMessage(message)

let db: PGlite | undefined
let server: PGLiteSocketServer | undefined

const stop = async () => {
  await server?.stop().catch(() => undefined)
  fs.rmSync(socketPath, { force: true })
  await db?.close().catch(() => undefined)
}

port.on("message", (message: ToEmbeddedPostgres) => {
  if (message._tag !== "Stop") return
  void stop().finally(() => {
    send({ _tag: "Stopped" })
    port.close()
  })
})

try {
  db = await PGlite.create({ dataDir, extensions: { vector } })
  // The parent's pool of one, a visiting admin CLI, and headroom for the liveness probe of the
  // next visitor, which the server only forgets a tick after it closed. Queries are still run
  // one at a time by the server's queue.
  server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 4 })
  await server.start()
  send({ _tag: "Ready" })
} catch (cause) {
  await stop()
  send({ _tag: "Failed", message: cause instanceof Error ? cause.message : String(cause) })
  port.close()
}
