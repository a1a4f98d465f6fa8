/** "Ask this recording": decode → one service call → encode. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { JobChat } from "../../services/chat/JobChat.ts"
import { Api } from "../contract/api/Api.ts"
import { CurrentAccount } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { publicBaseUrl } from "./PublicUrl.ts"

export const ChatHandlers = HttpApiBuilder.group(
  Api,
  "chat",
  Effect.fn(function*(handlers) {
    const config = yield* ServerConfig
    const chat = yield* JobChat
    return handlers
      .handle("ask", ({ params, payload, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentAccount
          return yield* chat.ask(caller, JobId.make(params.job_id), payload.question, publicBaseUrl(config, request))
        }))
      .handle("history", ({ params }) =>
        Effect.gen(function*() {
          return yield* chat.history(yield* CurrentAccount, JobId.make(params.job_id))
        }))
  })
)
