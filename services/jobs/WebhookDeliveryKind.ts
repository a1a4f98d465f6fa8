/**
 * The `webhook` task kind's declaration, apart from its handler (WebhookDeliveryTask.ts) so that
 * `JobEvents`, which stores one task per delivery, and the handler, which uses `JobEvents`, both
 * reach it. The schedule and its reasons are in JobEvents' module comment.
 */
import { Schema } from "effect"
import { taskKind } from "../work/TaskKind.ts"

/** Waits after attempts 1…8 (5 s, 30 s, 2 min, 10 min, 30 min, 2 h, 6 h, 12 h); the 9th attempt is the last. */
export const retryDelaysMs = [5_000, 30_000, 120_000, 600_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000]

/** A receiver that has not answered by then has failed this attempt. */
export const sendTimeoutMs = 15_000

/**
 * One task per delivery (payload and key: the delivery id), standing alone (a delivery outlives
 * its job, which may be deleted meanwhile). The engine holds its lease, keeps the wait between
 * attempts in the row (`not_before`) and caps the attempts.
 */
export const WebhookDelivery = taskKind({
  kind: "webhook",
  payload: Schema.String,
  owner: "none",
  // Sends wait on receivers, not on this machine: one slow receiver must not hold up the rest.
  concurrency: 20,
  maxAttempts: retryDelaysMs.length + 1,
  retryDelay: (attempt) => retryDelaysMs[Math.min(attempt, retryDelaysMs.length) - 1]!,
  // The engine's `timeout` is the total from the first attempt's start, waits included: the
  // schedule spans 20.7 h before the 9th attempt, and a service that was down (maintenance, a
  // laptop closed overnight) must still make the attempts left when it is back, so the total is
  // a week, not a day (with a day, 4 h of downtime gave deliveries up unsent). One attempt is
  // bounded by `sendTimeoutMs` inside the handler, and a process that hangs by `stallAfter`.
  timeout: "7 days",
  stallAfter: "1 minute"
})
