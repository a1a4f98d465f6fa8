/**
 * What a kind of background work is to the task engine. A kind is registered by a handler
 * (see `TaskHandlers`): its name, how many of its tasks one process runs at once, how long
 * one attempt may take and how long it may go without a heartbeat, and the two effects the
 * engine calls — `run` for an attempt and `giveUp` once the engine stops trying.
 *
 * Contract for handlers (delivery is at least once):
 * - `run` may be called again for the same task after a crash, a shard move or a failed
 *   attempt, so its effects must be idempotent or guarded (the job row's run token does
 *   this for transcription: a job ends `done` or `failed` exactly once).
 * - A typed failure (`TaskFailed`) or a defect counts as a failed attempt: retried after an
 *   exponential backoff until the kind's attempt cap, then `giveUp(task, "exhausted")`.
 *   An attempt whose process dies (out of memory, a native crash) counts too: it is
 *   replayed from the stored cluster message on the next start and counted there.
 * - `giveUp` must be idempotent as well: a crash right after it runs it again.
 * - `run` calls `heartbeat` while it makes progress; a running task without a heartbeat
 *   for `stallAfter` is given up as `stalled`, one running longer than `timeout` in total
 *   (over all its attempts) as `timeout`.
 */
import { type Duration, type Effect, Schema } from "effect"
import type { JobId } from "../../src/contract/domain/Ids.ts"

/** Every kind of durable work; a kind without a registered handler waits (its tasks stay pending). */
export const TaskKind = Schema.Literals(["transcribe", "diarize", "insights", "index", "render-clip"])
export type TaskKind = typeof TaskKind.Type

/** One attempt of a task, as the handler sees it. */
export interface TaskRun {
  readonly taskId: string
  readonly kind: TaskKind
  readonly jobId: JobId
  /** Distinguishes several tasks of one kind for one job (a clip id, say); "" when unused. */
  readonly subKey: string
  /** 1 for the first attempt. */
  readonly attempt: number
  /** Records liveness; false once this attempt no longer owns the task (given up, or a newer attempt). */
  readonly heartbeat: Effect.Effect<boolean>
  /** Whether this process runs `kind`: a task hands its job on to a follow-up kind only if so. */
  readonly isRegistered: (kind: TaskKind) => boolean
}

/** Why the engine stopped trying a task. */
export type GiveUpReason = "exhausted" | "stalled" | "timeout"

/** A failed attempt; retried with backoff until the attempt cap. */
export class TaskFailed extends Schema.TaggedError<TaskFailed>()("TaskFailed", {
  reason: Schema.String
}) {}

export interface TaskHandler {
  readonly kind: TaskKind
  /** Attempts of this kind running at once in one process. */
  readonly concurrency: number
  /** Attempts before `giveUp(…, "exhausted")`; the engine default (3) when absent. */
  readonly maxAttempts?: number | undefined
  /** Total running time allowed over all attempts. */
  readonly timeout: Duration.Input
  /** Longest silence between heartbeats of a running attempt. */
  readonly stallAfter: Duration.Input
  run(task: TaskRun): Effect.Effect<void, TaskFailed>
  giveUp(task: { readonly taskId: string; readonly jobId: JobId; readonly subKey: string; readonly attempts: number }, reason: GiveUpReason): Effect.Effect<void>
}
