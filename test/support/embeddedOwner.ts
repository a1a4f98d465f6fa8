/**
 * A process that owns an embedded database and nothing else, for the test that kills an owner
 * (test/foundation/embedded-postgres.test.ts): opens the data dir given as the first argument,
 * writes a row, prints `@@ready` and waits to be killed.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { EmbeddedPostgres } from "../../services/db/EmbeddedPostgres.ts"

const dataDir = process.argv[2]!
const client = Layer.unwrap(
  Effect.map(EmbeddedPostgres, ({ socketPath }) =>
    PgClient.layer({ path: socketPath, database: "postgres", username: "postgres", maxConnections: 1 }))
).pipe(Layer.provideMerge(EmbeddedPostgres.layer({ dataDir })))

await Effect.runPromise(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (!(yield* EmbeddedPostgres).owner) return yield* Effect.die("expected to own the database")
    yield* sql`CREATE TABLE kept (v text)`
    yield* sql`INSERT INTO kept VALUES ('written before the kill')`
    process.stdout.write("@@ready\n")
    return yield* Effect.never
  }).pipe(Effect.provide(client), Effect.scoped)
)
