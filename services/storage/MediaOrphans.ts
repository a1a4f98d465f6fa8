/**
 * Media no job will ever read: write temporaries left by a process that died mid-upload, and
 * owner folders (`jobs/<id>`, `uploads/<id>`, `clips/<id>`) whose id has neither a job nor an
 * upload ticket (a multipart upload whose process died after the bytes landed and before the
 * job row was written). Both are removed once idle for `VERBATIM_UPLOAD_ORPHAN_SECONDS`: an
 * upload in progress touches its files, and a submit turns its file into a job within seconds.
 * Idempotent, so several processes may run it at once (the watchdog runs it every pass).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { StorageConfig } from "../config/StorageConfig.ts"
import { MediaStorage } from "./MediaStorage.ts"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export const sweepMediaOrphans = Effect.gen(function*() {
  const storage = yield* MediaStorage
  const sql = yield* SqlClient.SqlClient
  const boundMs = (yield* StorageConfig).uploadOrphanSeconds * 1000
  const temporaries = yield* storage.sweepTemporaries(boundMs)
  const idle = (yield* storage.idleOwnerFolders(boundMs)).filter((owner) => uuid.test(owner.ownerId))
  if (idle.length === 0) return { temporaries, orphans: 0 }
  const ids = [...new Set(idle.map((owner) => owner.ownerId))]
  // Read-only existence check across the two tables that own media.
  const owned = yield* sql<{ id: string }>`
    SELECT id::text AS id FROM jobs WHERE id::text IN ${sql.in(ids)}
    UNION SELECT job_id::text FROM upload_tickets WHERE job_id::text IN ${sql.in(ids)}`.pipe(Effect.orDie)
  const known = new Set(owned.map((row) => row.id))
  const orphans = idle.filter((owner) => !known.has(owner.ownerId))
  yield* Effect.forEach(orphans, (owner) => storage.removeOwnerFolder(owner), { discard: true })
  return { temporaries, orphans: orphans.length }
}).pipe(Effect.withSpan("MediaOrphans.sweep"))
