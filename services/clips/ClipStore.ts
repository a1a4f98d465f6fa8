/**
 * The `clips` table. A clip row is created together with its charge (see `Clips.create`),
 * moved to `rendering` / `done` / `failed` by its render task, and deleted by `DELETE`.
 * The task's writes are guarded by the status they expect, so a render finishing after its
 * clip was deleted or failed writes nothing.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { AccountId, JobId } from "../../src/contract/domain/Ids.ts"
import { numbersFromBigInt } from "../db/BigIntColumns.ts"

export const ClipStatus = Schema.Literals(["queued", "rendering", "done", "failed"])
export const CaptionStyle = Schema.Literals(["karaoke", "line", "none"])

const BigIntNumber = Schema.Union([Schema.Number, Schema.NumberFromString])

export const ClipRecord = Schema.Struct({
  id: Schema.String,
  job_id: JobId,
  account_id: AccountId,
  start_s: Schema.Number,
  end_s: Schema.Number,
  caption_style: CaptionStyle,
  status: ClipStatus,
  progress: Schema.Number,
  object_key: Schema.NullOr(Schema.String),
  duration: Schema.NullOr(Schema.Number),
  charged_minutes: Schema.NullOr(BigIntNumber),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  started_at: Schema.NullOr(Schema.Date),
  completed_at: Schema.NullOr(Schema.Date)
})
export type ClipRecord = typeof ClipRecord.Type

export interface NewClip {
  readonly id: string
  readonly jobId: JobId
  readonly accountId: AccountId
  readonly startS: number
  readonly endS: number
  readonly captionStyle: typeof CaptionStyle.Type
  readonly chargedMinutes: number
}

const decodeClips = Schema.decodeUnknownEffect(Schema.Array(ClipRecord))

export class ClipStore extends Context.Service<ClipStore, {
  /** Joins the caller's transaction. */
  insert(clip: NewClip): Effect.Effect<void>
  get(id: string): Effect.Effect<Option.Option<ClipRecord>>
  /** Removes the row; its object key (if rendered) for the caller to delete. None if it was gone. */
  remove(id: string): Effect.Effect<Option.Option<{ readonly objectKey: string | null }>>
  /** queued|rendering → rendering; false when the clip is gone or ended. */
  startRendering(id: string): Effect.Effect<boolean>
  /** Progress 0..100 of a rendering clip; false when the clip is no longer rendering. */
  progress(id: string, percent: number): Effect.Effect<boolean>
  /** rendering → done; false when the clip is no longer rendering (deleted meanwhile). */
  finish(id: string, objectKey: string, durationSeconds: number): Effect.Effect<boolean>
  /** Not ended → failed with `error`; false when it had ended or is gone. */
  fail(id: string, error: string): Effect.Effect<boolean>
}>()("verbatim/clips/ClipStore") {
  static readonly layer = Layer.effect(
    ClipStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
      const changed = (rows: ReadonlyArray<unknown>) => rows.length > 0

      const insert = Effect.fn("ClipStore.insert")(function*(clip: NewClip) {
        yield* sql`INSERT INTO clips (id, job_id, account_id, start_s, end_s, caption_style, status, charged_minutes, created_at)
          VALUES (${clip.id}, ${clip.jobId}, ${clip.accountId}, ${clip.startS}, ${clip.endS}, ${clip.captionStyle}, 'queued',
            ${clip.chargedMinutes}, ${yield* now})`.pipe(Effect.orDie)
      })

      const get = Effect.fn("ClipStore.get")(function*(id: string) {
        const rows = yield* sql`SELECT * FROM clips WHERE id = ${id}`.pipe(Effect.orDie)
        const clips = yield* decodeClips(rows.map(numbersFromBigInt)).pipe(Effect.orDie)
        return Option.fromNullishOr(clips[0])
      })

      const remove = Effect.fn("ClipStore.remove")(function*(id: string) {
        const [row] = yield* sql<{ object_key: string | null }>`DELETE FROM clips WHERE id = ${id} RETURNING object_key`
          .pipe(Effect.orDie)
        return row === undefined ? Option.none() : Option.some({ objectKey: row.object_key })
      })

      const startRendering = Effect.fn("ClipStore.startRendering")(function*(id: string) {
        return changed(yield* sql`UPDATE clips SET status = 'rendering', started_at = COALESCE(started_at, ${yield* now})
          WHERE id = ${id} AND status IN ('queued', 'rendering') RETURNING id`.pipe(Effect.orDie))
      })

      const progress = Effect.fn("ClipStore.progress")(function*(id: string, percent: number) {
        return changed(yield* sql`UPDATE clips SET progress = ${percent}
          WHERE id = ${id} AND status = 'rendering' RETURNING id`.pipe(Effect.orDie))
      })

      const finish = Effect.fn("ClipStore.finish")(function*(id: string, objectKey: string, durationSeconds: number) {
        return changed(yield* sql`UPDATE clips SET status = 'done', progress = 100, object_key = ${objectKey},
            duration = ${durationSeconds}, completed_at = ${yield* now}, error = NULL
          WHERE id = ${id} AND status = 'rendering' RETURNING id`.pipe(Effect.orDie))
      })

      const fail = Effect.fn("ClipStore.fail")(function*(id: string, error: string) {
        return changed(yield* sql`UPDATE clips SET status = 'failed', error = ${error.slice(0, 1000)}, completed_at = ${yield* now}
          WHERE id = ${id} AND status IN ('queued', 'rendering') RETURNING id`.pipe(Effect.orDie))
      })

      return ClipStore.of({ insert, get, remove, startRendering, progress, finish, fail })
    })
  )
}
