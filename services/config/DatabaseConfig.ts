/** Where the database is, and the address this process's job runner takes when several share it. */
import { Config } from "effect"
import { port } from "./readers.ts"
import * as Setting from "./Setting.ts"

const fields = {
  databaseUrl: Setting.optional({
    env: "DATABASE_URL",
    read: Config.Redacted,
    doc: "a Postgres URL (`postgres://user:pass@host:5432/db`); unset means embedded PGlite. Postgres 15 or newer"
  }),
  runnerHost: Setting.setting({
    env: "VERBATIM_RUNNER_HOST",
    read: Config.String,
    fallback: "127.0.0.1",
    doc: "with Postgres: the address other Verbatim processes reach this one's job runner at"
  }),
  runnerPort: Setting.setting({
    env: "VERBATIM_RUNNER_PORT",
    read: port(1),
    fallback: 34431,
    doc: "with Postgres: this process's job runner port (each process on one host its own)"
  })
}

export class DatabaseConfig extends Setting.Area<DatabaseConfig>()("verbatim/config/DatabaseConfig", fields) {}
