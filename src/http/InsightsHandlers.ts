/** A job's insights: decode → one service call → encode. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { JobInsights } from "../../services/insights/JobInsights.ts"
import { Api } from "../contract/api/Api.ts"
import { CurrentAccount } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { publicBaseUrl } from "./PublicUrl.ts"

export const InsightsHandlers = HttpApiBuilder.group(
  Api,
  "insights",
  Effect.fn(function*(handlers) {
    const config = yield* ServerConfig
    const insights = yield* JobInsights
    return handlers.handle("get", ({ params, request }) =>
      Effect.gen(function*() {
        const caller = yield* CurrentAccount
        return { insights: yield* insights.get(caller, JobId.make(params.job_id), publicBaseUrl(config, request)) }
      }))
  })
)
