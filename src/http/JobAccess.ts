/**
 * Who may touch a job: the account that owns it, or — for a keyless sample — whoever
 * presents its claim token. Another account's job is indistinguishable from a missing
 * one (404); a sample read without (or with a wrong) claim token is 401.
 */
import { Effect, Option } from "effect"
import { JobStore } from "../../services/jobs/JobStore.ts"
import type { JobRecord } from "../../services/jobs/JobRecord.ts"
import { SampleQuota } from "../../services/SampleQuota.ts"
import { ClaimTokenRequired, NotFound } from "../contract/api/Errors.ts"
import type { Caller } from "../contract/api/Security.ts"
import type { JobId } from "../contract/domain/Ids.ts"

export const notFound = () => new NotFound({ error: "No job with this id belongs to the caller." })

/** Built once per handler group, so requests need no services of their own. */
export const makeJobAccess = Effect.gen(function*() {
  const quota = yield* SampleQuota
  const store = yield* JobStore

  const authorizeJob = Effect.fnUntraced(function*(caller: Caller, job: JobRecord) {
  if (caller._tag === "Account") {
    if (job.account_id !== caller.account.id) return yield* notFound()
    return job
  }
  if (job.claim_hash === null) {
    return yield* new ClaimTokenRequired({
      error: "This job belongs to an account: send that account's key in X-API-Key.",
      code: "MISSING_API_KEY"
    })
  }
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

  const loadJob = Effect.fnUntraced(function*(caller: Caller, id: JobId) {
    const job = yield* store.get(id)
    if (Option.isNone(job)) return yield* notFound()
    return yield* authorizeJob(caller, job.value)
  })

  return { authorizeJob, loadJob }
})
