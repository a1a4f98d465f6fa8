/**
 * Several service processes on one Postgres must see the same media directory: an upload
 * written by the process that took the request is transcribed by whichever process's runner
 * gets the task (measured before this check: 3 of 16 jobs failed for good with separate
 * directories, "The uploaded file is missing from storage").
 *
 * So each server process, at start, writes a marker file named by a fresh runner id into
 * `<media dir>/.runners/` and registers that id in `media_runners` (migration 0019); then it
 * reads the marker of every other live runner (seen within `liveForSeconds`, by the
 * database's clock). A marker it cannot read means its media directory is not the one the
 * others write to: it refuses to start with `MediaNotShared`, whose message says what to
 * mount. Registering before checking means two processes starting together on different
 * directories both refuse (each finds the other's row), rather than both running.
 *
 * A registered process beats `seen_at` every `beatSeconds`; a clean stop removes its row and
 * marker. A process killed with SIGKILL leaves both: its row stops counting as live after
 * `liveForSeconds`, and rows (with their markers) unseen for a day are removed by the next
 * process that starts. Embedded storage (PGlite) has one process per data dir, so there is
 * nothing to compare and the check is off (`shared: false`).
 *
 * Only the server registers (it runs tasks and takes uploads); the admin CLI does not.
 */
import { Context, Duration, Effect, Layer, Option, Schedule, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseConfig } from "../config/DatabaseConfig.ts"
import { StorageConfig } from "../config/StorageConfig.ts"
import { mediaRoot } from "./MediaStorage.ts"

/** Another live process whose marker this one cannot read. */
const UnseenRunner = Schema.Struct({
  runner_id: Schema.String,
  host: Schema.String,
  media_dir: Schema.String
})
type UnseenRunner = typeof UnseenRunner.Type

/** The media directory is not the one the other live processes on this database use. */
export class MediaNotShared extends Schema.TaggedError<MediaNotShared>()("MediaNotShared", {
  mediaDir: Schema.String,
  unseen: Schema.Array(UnseenRunner)
}) {
  override get message() {
    const others = this.unseen.map((runner) => `${runner.media_dir} on ${runner.host}`).join("; ")
    return `the media directory ${this.mediaDir} does not hold the files of ${this.unseen.length} other running ` +
      `Verbatim process${this.unseen.length === 1 ? "" : "es"} on this database (their media: ${others}); ` +
      `every process must see the same files, so mount one shared directory (NFS or a shared volume) on every ` +
      `machine and point VERBATIM_MEDIA_DIR at it in every process, then start again.`
  }
}

/** This process cannot write its marker into the media directory (read-only mount, permissions). */
export class MediaDirUnwritable extends Schema.TaggedError<MediaDirUnwritable>()("MediaDirUnwritable", {
  mediaDir: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `the media directory ${this.mediaDir} cannot be written (${this.reason}); uploads are stored there, so ` +
      `mount it read-write for this process's user (or point VERBATIM_MEDIA_DIR at a writable shared directory), then start again.`
  }
}

export interface SharedMediaOptions {
  /** Absolute media directory (as `MediaStorage` uses it). */
  readonly root: string
  /** Postgres (several processes possible): check and register. Embedded: do nothing. */
  readonly shared: boolean
  readonly beatSeconds?: number | undefined
  readonly liveForSeconds?: number | undefined
}

/** Marker folder inside the media directory (it holds files, never an owner's folder of media). */
const markerFolder = ".runners"
/** Rows (and markers) of processes not seen for this long are removed at start. */
const forgetAfterSeconds = 24 * 3600

export class SharedMedia extends Context.Service<SharedMedia, {
  /** This process's id in `media_runners` (undefined on embedded storage). */
  readonly runnerId: string | undefined
}>()("verbatim/storage/SharedMedia") {
  static readonly layerWith = (options: SharedMediaOptions) =>
    Layer.effect(
      SharedMedia,
      Effect.gen(function*() {
        if (!options.shared) return SharedMedia.of({ runnerId: undefined })
        const sql = yield* SqlClient.SqlClient
        const beat = options.beatSeconds ?? 5
        const liveFor = options.liveForSeconds ?? 30
        const runnerId = randomUUID()
        const markers = path.join(options.root, markerFolder)
        const markerOf = (id: string) => path.join(markers, id)
        const host = os.hostname()

        // Forget processes gone for a day (their markers too, where this directory holds them).
        const forgotten = yield* sql<{ runner_id: string }>`DELETE FROM media_runners
          WHERE seen_at < now() - make_interval(secs => ${forgetAfterSeconds}) RETURNING runner_id`.pipe(Effect.orDie)
        yield* Effect.sync(() => {
          for (const row of forgotten) fs.rmSync(markerOf(row.runner_id), { force: true })
        })

        yield* Effect.acquireRelease(
          Effect.gen(function*() {
            yield* Effect.try({
              try: () => {
                fs.mkdirSync(markers, { recursive: true })
                fs.writeFileSync(markerOf(runnerId), `${JSON.stringify({ runner_id: runnerId, host, pid: process.pid })}\n`)
              },
              catch: (error) =>
                new MediaDirUnwritable({ mediaDir: options.root, reason: (error as NodeJS.ErrnoException).code ?? String(error) })
            })
            yield* sql`INSERT INTO media_runners (runner_id, host, media_dir, started_at, seen_at)
              VALUES (${runnerId}, ${host}, ${options.root}, now(), now())`.pipe(Effect.orDie)
          }),
          () =>
            Effect.gen(function*() {
              yield* sql`DELETE FROM media_runners WHERE runner_id = ${runnerId}`.pipe(Effect.ignore)
              yield* Effect.sync(() => fs.rmSync(markerOf(runnerId), { force: true }))
            })
        )

        const others = yield* sql<UnseenRunner>`SELECT runner_id::text AS runner_id, host, media_dir FROM media_runners
          WHERE runner_id <> ${runnerId} AND seen_at > now() - make_interval(secs => ${liveFor})
          ORDER BY started_at`.pipe(Effect.orDie)
        // Read, not just stat: the marker names the runner it belongs to.
        const unseen = yield* Effect.filter(others, (runner) =>
          Effect.try(() => fs.readFileSync(markerOf(runner.runner_id), "utf8")).pipe(
            Effect.map((text) => !text.includes(runner.runner_id)),
            Effect.orElseSucceed(() => true)
          ))
        if (unseen.length > 0) return yield* new MediaNotShared({ mediaDir: options.root, unseen })

        yield* sql`UPDATE media_runners SET seen_at = now() WHERE runner_id = ${runnerId}`.pipe(
          Effect.catchCause((cause) => Effect.logWarning("media runner heartbeat failed", cause)),
          Effect.repeat(Schedule.spaced(Duration.seconds(beat))),
          Effect.forkScoped
        )
        yield* Effect.logInfo("media directory registered", { runner_id: runnerId, media_dir: options.root, others: others.length })
        return SharedMedia.of({ runnerId })
      })
    )

  /** The media directory of `MediaStorage.layer` (StorageConfig); checked when `DATABASE_URL` is set. */
  static readonly layer = Layer.unwrap(Effect.gen(function*() {
    const storage = yield* StorageConfig
    const database = yield* DatabaseConfig
    return SharedMedia.layerWith({ root: mediaRoot(storage), shared: Option.isSome(database.databaseUrl) })
  }))
}
