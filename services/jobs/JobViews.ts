/** Job rows → the public Job resource. */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { JobStore } from "./JobStore.ts"
import type { JobRecord } from "./JobRecord.ts"
import type { DiarizationState, JobView } from "../../src/contract/domain/Job.ts"

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

/** See `DiarizationState`: pending until the job ends, then as stored; null without `diarize`. */
const diarizationOf = (job: JobRecord): DiarizationState => {
  if (!job.diarize) return null
  if (job.status === "queued" || job.status === "processing") return "pending"
  return job.diarization
}

/** `unlockUrl`: where to add credit, shown on locked jobs. */
export const toJobView = (job: JobRecord, queuePosition: number, unlockUrl?: string): JobView => {
  const failed = job.status === "failed"
  return {
    job_id: job.id,
    status: job.status,
    progress: job.status === "done" ? 100 : Math.round(job.progress * 10) / 10,
    queue_position: job.status === "queued" ? queuePosition : 0,
    filename: job.filename,
    audio_duration_seconds: job.audio_duration_seconds,
    language: job.language,
    source: job.source,
    speech_detected: job.speech_detected ?? false,
    speech_ratio: job.speech_ratio ?? 0,
    locked: job.locked,
    ...(job.locked ? { locked_code: "transcript_locked" as const, ...(unlockUrl === undefined ? {} : { unlock_url: unlockUrl }) } : {}),
    created_at: seconds(job.created_at),
    completed_at: job.completed_at === null ? null : seconds(job.completed_at),
    error: failed ? job.error : null,
    ...(failed ? { error_code: job.error_code ?? "SERVICE_ERROR", retryable: job.retryable ?? false } : {}),
    ...(job.account_id === null ? { preview: true } : {}),
    diarization: diarizationOf(job)
  }
}

export const makeJobView = Effect.map(JobStore, (store) =>
  Effect.fnUntraced(function*(job: JobRecord, unlockUrl?: string) {
    return toJobView(job, yield* store.queuePosition(job), unlockUrl)
  }))

/** A strong validator over the exact representation: any visible change changes it. */
export const etagOf = (view: JobView) => `"${createHash("sha256").update(JSON.stringify(view)).digest("base64url").slice(0, 27)}"`
