/**
 * `/readyz`: whether this process can do its work now. Each check is bounded in time and
 * names itself when it fails, so an operator (or a load balancer's log) sees what to fix:
 * - `database`: a round trip to the database within 2 s;
 * - `models`: the configured model's files are on disk with their expected sizes (a missing
 *   model would be downloaded by the first job, which is not "ready");
 * - `workers`: no job has waited in the queue longer than `VERBATIM_JOB_STALL_SECONDS` while
 *   nothing is processing (the task engine is taking work);
 * - `disk`: at least `minFreeBytes` free where the embedded database lives and where media
 *   lives (`VERBATIM_MEDIA_DIR`, possibly a shared mount).
 */
import { Context, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { whisperModels } from "../../pipeline/models/ModelRegistry.ts"
import { JobsConfig } from "../config/JobsConfig.ts"
import { SpeechConfig } from "../config/SpeechConfig.ts"
import { StorageConfig } from "../config/StorageConfig.ts"
import { mediaRoot } from "../storage/MediaStorage.ts"

export interface ReadinessCheck {
  readonly name: "database" | "models" | "workers" | "disk"
  readonly ok: boolean
  readonly detail: string
}

export interface ReadinessReport {
  readonly ready: boolean
  readonly checks: ReadonlyArray<ReadinessCheck>
}

/** Free space below this fails `disk`: a job's media and transcript need room. */
export const minFreeBytes = 512 * 1024 * 1024

const within = (name: ReadinessCheck["name"], check: Effect.Effect<ReadinessCheck>, seconds = 2) =>
  check.pipe(
    Effect.timeoutOrElse({
      duration: Duration.seconds(seconds),
      orElse: () => Effect.succeed({ name, ok: false, detail: `no answer within ${seconds} s` } satisfies ReadinessCheck)
    })
  )

export class Readiness extends Context.Service<Readiness, {
  readonly check: Effect.Effect<ReadinessReport>
}>()("verbatim/ops/Readiness") {
  static readonly layer = Layer.effect(
    Readiness,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const config = { ...(yield* JobsConfig), ...(yield* SpeechConfig), ...(yield* StorageConfig) }

      const database = within(
        "database",
        sql`SELECT 1 AS one`.pipe(
          Effect.as({ name: "database", ok: true, detail: "reachable" } as const),
          Effect.catchCause((cause) =>
            Effect.succeed({ name: "database", ok: false, detail: `unreachable: ${String(cause).split("\n")[0]}` } as const)
          )
        )
      )

      const models = Effect.promise(async (): Promise<ReadinessCheck> => {
        const spec = whisperModels.find((candidate) => candidate.name === config.model)
        if (spec === undefined) return { name: "models", ok: false, detail: `unknown model ${config.model}` }
        const missing: Array<string> = []
        for (const file of spec.files) {
          const stat = await fsp.stat(path.resolve(config.modelsDir, spec.folder, file.file)).catch(() => undefined)
          if (stat === undefined || stat.size !== file.bytes) missing.push(file.file)
        }
        return missing.length === 0
          ? { name: "models", ok: true, detail: `${config.model} present` }
          : {
            name: "models",
            ok: false,
            detail: `${config.model} is missing ${missing.join(", ")} in ${config.modelsDir} (run: verbatim models pull ${config.model})`
          }
      })

      const workers = within(
        "workers",
        sql<{ waiting: number | null; processing: number }>`
          SELECT
            (SELECT EXTRACT(EPOCH FROM (now() - min(created_at)))::float8 FROM jobs
              WHERE status = 'queued' AND deleted_at IS NULL) AS waiting,
            (SELECT count(*)::int FROM jobs WHERE status = 'processing' AND deleted_at IS NULL) AS processing`.pipe(
          Effect.map(([row]): ReadinessCheck => {
            const waiting = row?.waiting ?? 0
            return row !== undefined && row.processing === 0 && waiting > config.jobStallSeconds
              ? { name: "workers", ok: false, detail: `a job has waited ${Math.round(waiting)} s with nothing processing` }
              : { name: "workers", ok: true, detail: `${row?.processing ?? 0} processing, ${config.workers} per process` }
          }),
          Effect.catchCause(() => Effect.succeed({ name: "workers", ok: false, detail: "job queue unreadable" } as const))
        )
      )

      /** Free space where `dir` lives, or what is wrong there. */
      const freeIn = async (dir: string): Promise<{ readonly ok: boolean; readonly detail: string }> => {
        const stats = await fsp.statfs(dir).catch(() => undefined)
        if (stats === undefined) return { ok: false, detail: `${dir} is not readable` }
        const free = stats.bavail * stats.bsize
        const mb = Math.floor(free / 1024 / 1024)
        return free >= minFreeBytes
          ? { ok: true, detail: `${mb} MB free` }
          : { ok: false, detail: `only ${mb} MB free in ${dir} (needs ${minFreeBytes / 1024 / 1024} MB)` }
      }

      // The data dir and, when it is elsewhere (VERBATIM_MEDIA_DIR, a shared mount), the media dir.
      const media = mediaRoot(config)
      /** The media dir, or its nearest existing parent before the first write creates it. */
      const existing = (dir: string): string => (fs.existsSync(dir) || path.dirname(dir) === dir ? dir : existing(path.dirname(dir)))
      const disk = Effect.promise(async (): Promise<ReadinessCheck> => {
        const data = await freeIn(config.dataDir)
        if (media.startsWith(path.resolve(config.dataDir) + path.sep)) return { name: "disk", ...data }
        const shared = await freeIn(existing(media))
        return {
          name: "disk",
          ok: data.ok && shared.ok,
          detail: data.ok && shared.ok ? `${data.detail}; media: ${shared.detail}` : [data, shared].filter((c) => !c.ok).map((c) => c.detail).join("; ")
        }
      })

      const check = Effect.all([database, models, workers, disk], { concurrency: "unbounded" }).pipe(
        Effect.map((checks) => ({ ready: checks.every((c) => c.ok), checks }))
      )
      return Readiness.of({ check })
    })
  )
}
