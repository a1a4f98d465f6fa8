/**
 * Who may touch a job: the account that owns it, or — for a keyless sample — whoever
 * presents its claim token. Another account's job is indistinguishable from a missing
 * one (404); a sample read without (or with a wrong) claim token is 401.
 */
import { Context, Effect, Layer, Option } from "effect"
import { ClaimTokenRequired, NotFound } from "../../src/contract/api/Errors.ts"
import type { Caller } from "../../src/contract/api/Security.ts"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import type { JobRecord } from "../jobs/JobRecord.ts"
import { JobStore } from "../jobs/JobStore.ts"
import { SampleQuota } from "../SampleQuota.ts"

export const jobNotFound = () => new NotFound({ error: "No job with this id belongs to the caller." })

export class JobAccess extends Context.Service<JobAccess, {
  /** `job` if the caller may use it. */
  authorize(caller: Caller, job: JobRecord): Effect.Effect<JobRecord, NotFound | ClaimTokenRequired>
  /** The caller's job (not deleted). */
  load(caller: Caller, id: JobId): Effect.Effect<JobRecord, NotFound | ClaimTokenRequired>
  /** The caller's deleted job, still inside its restore window. */
  loadDeleted(caller: Caller, id: JobId): Effect.Effect<JobRecord, NotFound | ClaimTokenRequired>
}>()("verbatim/access/JobAccess") {
  static readonly layer = Layer.effect(
    JobAccess,
    Effect.gen(function*() {
      const quota = yield* SampleQuota
      const store = yield* JobStore

      /**
       * A keyless caller gets the same answer for an account's job and for an id that does
       * not exist, so job ids cannot be probed without a key.
       */
      const notReadableWithoutKey = () =>
        new ClaimTokenRequired({
          error: "Without an API key only sample jobs can be read, with their X-Claim-Token; " +
            "for an account's job send that account's key in X-API-Key.",
          code: "MISSING_API_KEY"
        })

      const authorize = Effect.fn("JobAccess.authorize")(function*(caller: Caller, job: JobRecord) {
        if (caller._tag === "Account") {
          if (job.account_id !== caller.account.id) return yield* jobNotFound()
          return job
        }
        if (job.claim_hash === null) return yield* notReadableWithoutKey()
        if (caller.claimToken === undefined || caller.claimToken === "") {
          return yield* new ClaimTokenRequired({
            error: "Reading a sample job needs the claim_token from its submit answer in X-Claim-Token.",
            code: "MISSING_API_KEY"
          })
        }
        if (!quota.verify(caller.claimToken, job.claim_hash)) {
          return yield* new ClaimTokenRequired({ error: "The X-Claim-Token does not match this job.", code: "INVALID_API_KEY" })
        }
        return job
      })

      const load = Effect.fn("JobAccess.load")(function*(caller: Caller, id: JobId) {
        const job = yield* store.get(id)
        if (Option.isNone(job)) return yield* (caller._tag === "Guest" ? notReadableWithoutKey() : jobNotFound())
        return yield* authorize(caller, job.value)
      })

      const loadDeleted = Effect.fn("JobAccess.loadDeleted")(function*(caller: Caller, id: JobId) {
        const found = yield* store.getAny(id)
        if (Option.isNone(found) || found.value.deleted_at === null) {
          return yield* (caller._tag === "Guest" ? notReadableWithoutKey() : jobNotFound())
        }
        return yield* authorize(caller, found.value)
      })

      return JobAccess.of({ authorize, load, loadDeleted })
    })
  )
}
