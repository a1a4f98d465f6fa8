/**
 * What a kind of background work is to the task engine, declared once next to its handler:
 * its name, the Schema of its payload (the task's typed parameters, stored as JSON in the task
 * row and decoded before each attempt), whether its tasks belong to a job, how many of its
 * tasks one process runs at once, its attempt cap and backoff, how long one task may take in
 * total and how long its lease may go without a beat. The handler adds the two effects the
 * engine calls — `run` for an attempt and `giveUp` once the engine stops trying. Adding a kind
 * is one file exporting such a handler plus one entry in the process's list of kinds
 * (`taskKinds` in layers/App.ts); the kind names are not a closed list.
 *
 * Contract for handlers (delivery is at least once):
 * - `run` may be called again for the same task after a crash, a shutdown or a failed
 *   attempt, on this process or another, so its effects must be idempotent or guarded (the job row's run token does
 *   this for transcription: a job ends `done` or `failed` exactly once).
 * - A typed failure (`TaskFailed`) or a defect counts as a failed attempt: the task waits
 *   `backoff · 2^(attempt − 1)`, or `retryDelay(attempt)` when the kind gives one (kept in the
 *   row as `not_before`, so it survives a restart)
 *   and is tried again until the kind's attempt cap, then `giveUp(task, "exhausted")`.
 *   An attempt whose process dies (out of memory, a native crash) counts too: its lease
 *   expires and the next claim (by any runner) counts another attempt.
 * - `giveUp` must be idempotent as well: a crash right after it runs it again.
 * - The engine holds the task's lease while `run` runs: it beats the heartbeat itself (one
 *   batched UPDATE per process per beat, whatever the number of running tasks), and
 *   interrupts `run` once the lease is lost (the task was given up or taken over), so a
 *   handler writes no heartbeat loop. A lease silent for the engine's lease expiry (10 s by
 *   default: the process died) is taken over by any runner with a free slot. An attempt whose
 *   process lives but hangs (a lease beaten yet silent for `stallAfter`, or, for a kind with
 *   `watchProgress`, no progress reported for `stallAfter`) is given up as `stalled`; a task
 *   running longer than `timeout` in total (over all its attempts) as `timeout`.
 */
import { type Duration, type Effect, Schema } from "effect"
import type { JobId } from "../../src/contract/domain/Ids.ts"

/** A kind's name, as stored in `tasks.kind`. */
export type TaskKind = string

/** The payload Schema of a kind without parameters: nothing is stored (NULL). */
export const NoPayload = Schema.Null

/** Whether a kind's tasks each belong to a job (`"job"`), or stand alone (`"none"`). */
export type TaskOwner = "job" | "none"
/** The job id an attempt of such a kind sees. */
export type OwnerId<O extends TaskOwner> = O extends "job" ? JobId : null

/** The declaration of a kind: everything the engine needs to schedule it. */
export interface TaskKindSpec<P = unknown, O extends TaskOwner = TaskOwner> {
  readonly kind: TaskKind
  /** Encodes the payload to JSON for the row and decodes it back before each attempt. */
  readonly payload: Schema.Codec<P, unknown>
  /** `"job"` unless said otherwise: enqueued with a job id, and `jobId` is set in every run. */
  readonly owner?: O | undefined
  /** Attempts of this kind running at once in one process. */
  readonly concurrency: number
  /** Attempts before `giveUp(…, "exhausted")`; the engine default (3) when absent. */
  readonly maxAttempts?: number | undefined
  /** Wait after the first failed attempt, doubling with each further one; the engine default when absent. */
  readonly backoff?: Duration.Input | undefined
  /**
   * The wait after failed attempt `attempt` (1 for the first), in place of `backoff`'s doubling:
   * for a schedule that doubling cannot express (webhook deliveries: 5 s, 30 s, 2 min, … 12 h).
   * Kept in the row as `not_before` like any backoff.
   */
  readonly retryDelay?: ((attempt: number) => Duration.Input) | undefined
  /** Total running time allowed over all attempts. */
  readonly timeout: Duration.Input
  /** Longest silence of a running attempt's lease (or its progress, with `watchProgress`) before it is given up as stalled. */
  readonly stallAfter: Duration.Input
  /**
   * The attempt reports progress (`TaskRun.progressed`), and it is stalled when it has not for
   * `stallAfter`, although its process still beats the lease: for work that runs in a worker
   * thread (an ONNX run can hang there while the main thread is free). Default false: stalled
   * only when the lease goes silent.
   */
  readonly watchProgress?: boolean | undefined
}

/** Declares a kind (a typed identity; `Tasks.submit` takes it to enqueue one of its tasks). */
export const taskKind = <P, O extends TaskOwner = "job">(spec: TaskKindSpec<P, O>): TaskKindSpec<P, O> => spec

/** One attempt of a task, as the handler sees it. */
export interface TaskRun<P = unknown, O extends TaskOwner = TaskOwner> {
  readonly taskId: string
  readonly kind: TaskKind
  readonly jobId: OwnerId<O>
  /** The task's parameters, decoded with the kind's Schema. */
  readonly payload: P
  /** Distinguishes several tasks of one kind for one job (a clip id, say); "" when unused. */
  readonly subKey: string
  /** 1 for the first attempt. */
  readonly attempt: number
  /** Whether this process runs `kind`: a task hands its job on to a follow-up kind only if so. */
  readonly isRegistered: (kind: TaskKind) => boolean
  /** Records that the attempt made progress (cheap: in memory, written with the next beat); see `watchProgress`. */
  readonly progressed: Effect.Effect<void>
}

/** A task the engine stops trying. `payload` is absent when the stored one no longer decodes. */
export interface GivenUpTask<P = unknown, O extends TaskOwner = TaskOwner> {
  readonly taskId: string
  readonly jobId: OwnerId<O>
  readonly subKey: string
  readonly payload?: P | undefined
  readonly attempts: number
}

/**
 * What a finished attempt did, in words for the log: a task that ends `done` may have ended its
 * job failed (a transcription of a file without audio, say), which the `task ended` line must not
 * hide behind `outcome: done`.
 */
export interface TaskEnd {
  /** e.g. "job done", "job failed", "job handed on to diarize", "job no longer ours". */
  readonly result: string
  readonly error_code?: string | undefined
}

/** Why the engine stopped trying a task. */
export type GiveUpReason = "exhausted" | "stalled" | "timeout"

/** A failed attempt; retried with backoff until the attempt cap. */
export class TaskFailed extends Schema.TaggedError<TaskFailed>()("TaskFailed", {
  reason: Schema.String
}) {}

/**
 * A kind with its behaviour: what a process registers. `payload` defaults to `NoPayload`.
 * Declare `run`'s and `giveUp`'s parameters as `TaskRun<P, O>` / `GivenUpTask<P, O>`, so the
 * handler also fits the engine's erased `TaskHandler` (any payload, either owner).
 */
export interface TaskHandler<P = any, O extends TaskOwner = TaskOwner> extends Omit<TaskKindSpec<P, O>, "payload"> {
  readonly payload?: Schema.Codec<P, unknown> | undefined
  /** May say what the attempt did to its job (`TaskEnd`), for the engine's `task ended` log line. */
  run(task: TaskRun<P, O>): Effect.Effect<TaskEnd | void, TaskFailed>
  giveUp(task: GivenUpTask<P, O>, reason: GiveUpReason): Effect.Effect<void>
}
