/**
 * Versioned schema migrations, run at start inside one transaction that holds an
 * exclusive lock on the migrations table, so several processes starting together on one
 * Postgres apply each migration exactly once.
 */
import { Layer } from "effect"
import * as Migrator from "effect/sql/Migrator"
import foundation from "./migrations/0001_foundation.ts"

const run = Migrator.make({})

export const migrations = Migrator.fromRecord({
  "0001_foundation": foundation
})

export const MigrationsLayer = Layer.effectDiscard(run({ loader: migrations, table: "verbatim_migrations" }))
