/** Clips and their signed video links: decode → one service call → encode. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { Clips } from "../../services/clips/Clips.ts"
import { Api } from "../contract/api/Api.ts"
import { CurrentAccount } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { mediaResponse } from "./PlaybackHandlers.ts"
import { publicBaseUrl } from "./PublicUrl.ts"

export const ClipHandlers = HttpApiBuilder.group(
  Api,
  "clips",
  Effect.fn(function*(handlers) {
    const config = yield* ServerConfig
    const clips = yield* Clips
    return handlers
      .handle("create", ({ params, payload, request }) =>
        Effect.gen(function*() {
          return yield* clips.create(yield* CurrentAccount, JobId.make(params.job_id), payload, publicBaseUrl(config, request))
        }))
      .handle("get", ({ params, request }) =>
        Effect.gen(function*() {
          const { account } = yield* CurrentAccount
          return yield* clips.get(account.id, params.clip_id, publicBaseUrl(config, request))
        }))
      .handle("remove", ({ params }) =>
        Effect.gen(function*() {
          const { account } = yield* CurrentAccount
          yield* clips.remove(account.id, params.clip_id)
        }))
  })
)

export const ClipMediaHandlers = HttpApiBuilder.group(
  Api,
  "clipMedia",
  Effect.fn(function*(handlers) {
    const clips = yield* Clips
    return handlers.handle("video", ({ params, query, headers }) =>
      Effect.gen(function*() {
        return yield* mediaResponse(yield* clips.video(params.clip_id, query.token, headers))
      }))
  })
)
