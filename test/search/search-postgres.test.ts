/**
 * The search contract on the Postgres backend: PGlite with pgvector (HNSW), PGlite with
 * the exact-scan layout a server without pgvector gets, and the test server when
 * `VERBATIM_TEST_DATABASE_URL` is set (whichever layout its migration chose).
 */
import { Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { PostgresSearchBackend } from "../../search/PostgresSearchBackend.ts"
import { SearchIndex } from "../../search/SearchIndex.ts"
import { onPostgres } from "../support/database.ts"
import { searchContract } from "./contract.ts"
import { embedderLayer, testDatabase, withoutPgvector } from "./support.ts"

const index = <E>(database: Layer.Layer<SqlClient.SqlClient, E>) =>
  SearchIndex.layer.pipe(
    Layer.provide(PostgresSearchBackend.layer()),
    Layer.provide(embedderLayer),
    Layer.provide(database)
  )

searchContract(onPostgres ? "Postgres server" : "PGlite, pgvector", index(testDatabase("search-pg")))
searchContract(
  onPostgres ? "Postgres server, exact scan" : "PGlite, exact scan",
  index(withoutPgvector.pipe(Layer.provideMerge(testDatabase("search-pg-exact"))))
)
