/**
 * Storage composition root: real Postgres when `DATABASE_URL` is set, otherwise embedded
 * PGlite under `<dataDir>/pg` reached over its unix socket with a pool of one (PGlite runs
 * one query at a time; more client connections interleave replies). Migrations run before
 * anything else sees the client. With the embedded database `EmbeddedPostgres` is in the
 * context too (whether this process owns it decides where request rates are counted), and
 * `BufferPrewarm` reads its relations into PGlite's cache in the background after migrations.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option } from "effect"
import * as path from "node:path"
import { DatabaseConfig } from "../services/config/DatabaseConfig.ts"
import { StorageConfig } from "../services/config/StorageConfig.ts"
import { BufferPrewarm } from "../services/db/BufferPrewarm.ts"
import { EmbeddedPostgres } from "../services/db/EmbeddedPostgres.ts"
import { MigrationsLayer } from "../services/db/Migrations.ts"

const embedded = (dataDir: string) =>
  Layer.unwrap(
    Effect.map(EmbeddedPostgres, ({ socketPath }) =>
      PgClient.layer({
        path: socketPath,
        database: "postgres",
        username: "postgres",
        maxConnections: 1,
        minConnections: 1
      }))
  ).pipe(Layer.provideMerge(EmbeddedPostgres.layer({ dataDir: path.join(dataDir, "pg") })))

export const DatabaseLayer = Layer.unwrap(
  Effect.gen(function*() {
    const { databaseUrl } = yield* DatabaseConfig
    const { dataDir } = yield* StorageConfig
    return Option.match(databaseUrl, {
      onSome: (url) => Layer.merge(MigrationsLayer.pipe(Layer.provideMerge(PgClient.layer({ url, maxConnections: 8 }))), BufferPrewarm.none),
      onNone: () => BufferPrewarm.layer.pipe(Layer.provideMerge(MigrationsLayer.pipe(Layer.provideMerge(embedded(dataDir)))))
    })
  })
)
