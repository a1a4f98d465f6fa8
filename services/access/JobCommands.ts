/**
 * Deleting and restoring a caller's job. Delete is soft: the job disappears from reads,
 * its files stay for the 24-hour restore window, and a run in progress stops at its next
 * heartbeat. Restore brings it back; an unfinished job is queued and dispatched again.
 */
import { Context, Effect, Layer } from "effect"
import type { ClaimTokenRequired, NotFound } from "../../src/contract/api/Errors.ts"
import type { Caller } from "../../src/contract/api/Security.ts"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import type { JobView } from "../../src/contract/domain/Job.ts"
import { JobDispatcher } from "../jobs/JobDispatcher.ts"
import { JobStore } from "../jobs/JobStore.ts"
import { toJobView } from "../jobs/JobViews.ts"
import { JobAccess, jobNotFound } from "./JobAccess.ts"

export class JobCommands extends Context.Service<JobCommands, {
  remove(caller: Caller, id: JobId): Effect.Effect<void, NotFound | ClaimTokenRequired>
  restore(caller: Caller, id: JobId): Effect.Effect<JobView, NotFound | ClaimTokenRequired>
}>()("verbatim/access/JobCommands") {
  static readonly layer = Layer.effect(
    JobCommands,
    Effect.gen(function*() {
      const access = yield* JobAccess
      const store = yield* JobStore
      const dispatcher = yield* JobDispatcher

      const remove = Effect.fn("JobCommands.remove")(function*(caller: Caller, id: JobId) {
        const job = yield* access.load(caller, id)
        yield* store.remove(job.id).pipe(Effect.catchTag("JobNotFound", () => Effect.fail(jobNotFound())))
      })

      const restore = Effect.fn("JobCommands.restore")(function*(caller: Caller, id: JobId) {
        const job = yield* access.loadDeleted(caller, id)
        const restored = yield* store.restore(job.id, job.account_id).pipe(
          Effect.catchTag("JobNotFound", () => Effect.fail(jobNotFound()))
        )
        if (restored.status === "queued") yield* dispatcher.dispatch(restored.id)
        return toJobView(restored, yield* store.queuePosition(restored))
      })

      return JobCommands.of({ remove, restore })
    })
  )
}
