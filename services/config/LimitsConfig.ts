/** Request budgets per account or address, and keyless samples per day. */
import { positiveInt } from "./readers.ts"
import * as Setting from "./Setting.ts"

const fields = {
  rateLimitPerMinute: Setting.setting({
    env: "VERBATIM_RATE_LIMIT_PER_MINUTE",
    read: positiveInt,
    fallback: 60,
    doc: "requests per minute per account (all its keys together), or per address for keyless calls"
  }),
  enterpriseRateLimitPerMinute: Setting.setting({
    env: "VERBATIM_ENTERPRISE_RATE_LIMIT_PER_MINUTE",
    read: positiveInt,
    fallback: 120,
    doc: "the same on the enterprise plan"
  }),
  batchStatusPerMinute: Setting.setting({
    env: "VERBATIM_BATCH_STATUS_PER_MINUTE",
    read: positiveInt,
    fallback: 600,
    doc: "the batch status call's own budget"
  }),
  samplesPerDay: Setting.setting({
    env: "VERBATIM_SAMPLES_PER_DAY",
    read: positiveInt,
    fallback: 3,
    doc: "keyless sample transcriptions per client address per UTC day"
  })
}

export class LimitsConfig extends Setting.Area<LimitsConfig>()("verbatim/config/LimitsConfig", fields) {}
