/**
 * Embedded Postgres: PGlite (with pgvector) on a persistent data directory, served over a
 * unix socket by pglite-socket so the rest of the service talks plain Postgres protocol
 * through `@effect/sql-pg`, exactly as it does against a real server.
 *
 * One process owns a data directory. A second process pointed at the same directory (the
 * admin CLI while the server runs) finds the owner's socket alive and connects to it
 * instead of opening the files twice, which PGlite cannot survive.
 */
import { PGlite } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Context, Effect, Layer, Schema } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

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
        const db = yield* Effect.acquireRelease(
          Effect.tryPromise({ try: () => PGlite.create({ dataDir, extensions: { vector } }), catch: fail }),
          (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
        )
        // This process's pool of one, a visiting admin CLI, and headroom for the liveness probe
        // of the next visitor, which the server only forgets a tick after it closed. Queries
        // are still run one at a time by the server's queue.
        yield* Effect.acquireRelease(
          Effect.tryPromise({
            try: async () => {
              const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 4 })
              await server.start()
              return server
            },
            catch: fail
          }),
          (server) =>
            Effect.promise(() => server.stop()).pipe(
              Effect.andThen(Effect.sync(() => fs.rmSync(socketPath, { force: true }))),
              Effect.ignore
            )
        )
        return EmbeddedPostgres.of({ socketPath, owner: true })
      })
    )
}
