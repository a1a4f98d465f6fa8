/** Limits on one job's run: how long without a heartbeat, and how long in all. */
import { positiveInt } from "./readers.ts"
import * as Setting from "./Setting.ts"

const fields = {
  jobStallSeconds: Setting.setting({
    env: "VERBATIM_JOB_STALL_SECONDS",
    read: positiveInt,
    fallback: 600,
    doc: "a processing job without a heartbeat this long ends `PROCESSING_STALLED`"
  }),
  jobTimeoutSeconds: Setting.setting({
    env: "VERBATIM_JOB_TIMEOUT_SECONDS",
    read: positiveInt,
    fallback: 6 * 3600,
    doc: "a job processing this long ends `PROCESSING_TIMEOUT`"
  })
}

export class JobsConfig extends Setting.Area<JobsConfig>()("verbatim/config/JobsConfig", fields) {}
