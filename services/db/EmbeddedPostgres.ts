/**
 * Embedded Postgres: PGlite (with pgvector) on a persistent data directory, served over a
 * unix socket by pglite-socket so the rest of the service talks plain Postgres protocol
 * through `@effect/sql-pg`, exactly as it does against a real server. Both run in a
 * worker thread of their own (embeddedPostgresWorker.ts), off the HTTP event loop.
 *
 * One process owns a data directory. A second process pointed at the same directory (the
 * admin CLI while the server runs) finds the owner's socket alive and connects to it
 * instead of opening the files twice, which PGlite cannot survive.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Worker } from "node:worker_threads"
import type { EmbeddedPostgresWorkerData, FromEmbeddedPostgres, ToEmbeddedPostgres } from "./embeddedPostgresWorker.ts"

/** How long a stopping database thread may take to flush and close before it is terminated. */
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
        if (yield* socketAlive(socketPath)) {
          return EmbeddedPostgres.of({ socketPath, owner: false })
        }
        const fail = (cause: unknown) => new EmbeddedPostgresError({ dataDir, cause })
        yield* Effect.try({
          try: () => {
            fs.mkdirSync(dataDir, { recursive: true })
            fs.mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 })
            fs.rmSync(socketPath, { force: true })
          },
          catch: fail
        })
        // PGlite and its socket server run in a thread of their own (embeddedPostgresWorker.ts):
        // its WASM costs ~0.4 ms of CPU per query, which on the HTTP event loop every request
        // waited behind. Released by asking it to stop (PGlite flushes and closes its files),
        // terminated if it has not ended after `stopTimeoutMs`.
        yield* Effect.acquireRelease(
          Effect.callback<Worker, EmbeddedPostgresError>((resume) => {
            const worker = new Worker(new URL("./embeddedPostgresWorker.ts", import.meta.url), {
              workerData: { dataDir, socketPath } satisfies EmbeddedPostgresWorkerData
            })
            const onExit = (code: number) => resume(Effect.fail(fail(`the database thread exited (code ${code}) before it was ready`)))
            const onError = (error: Error) => resume(Effect.fail(fail(error)))
            worker.once("exit", onExit)
            worker.once("error", onError)
            worker.once("message", (message: FromEmbeddedPostgres) => {
              worker.off("exit", onExit)
              worker.off("error", onError)
              if (message._tag === "Ready") resume(Effect.succeed(worker))
              else resume(Effect.fail(fail(message._tag === "Failed" ? message.message : message._tag)))
            })
          }),
          (worker) =>
            Effect.callback<void>((resume) => {
              const kill = setTimeout(() => void worker.terminate(), stopTimeoutMs)
              worker.once("exit", () => {
                clearTimeout(kill)
                fs.rmSync(socketPath, { force: true })
                resume(Effect.void)
              })
              worker.postMessage({ _tag: "Stop" } satisfies ToEmbeddedPostgres)
            })
        )
        return EmbeddedPostgres.of({ socketPath, owner: true })
      })
    )
}
