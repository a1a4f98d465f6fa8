/** A job's speakers and their names: decode → one service call → encode. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { JobSpeakers } from "../../services/speakers/JobSpeakers.ts"
import { Api } from "../contract/api/Api.ts"
import { CurrentCaller } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"

export const SpeakerHandlers = HttpApiBuilder.group(
  Api,
  "speakers",
  Effect.fn(function*(handlers) {
    const speakers = yield* JobSpeakers
    return handlers
      .handle("list", ({ params }) =>
        Effect.gen(function*() {
          return yield* speakers.list(yield* CurrentCaller, JobId.make(params.job_id))
        }))
      .handle("rename", ({ params, payload }) =>
        Effect.gen(function*() {
          return yield* speakers.rename(yield* CurrentCaller, JobId.make(params.job_id), payload.names)
        }))
  })
)
