/** Library search, clip candidates and clip search: decode → one service call → encode. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { ClipDiscovery } from "../../services/search-index/ClipDiscovery.ts"
import { LibrarySearch } from "../../services/search-index/LibrarySearch.ts"
import { Api } from "../contract/api/Api.ts"
import { CurrentAccount } from "../contract/api/Security.ts"
import { JobId } from "../contract/domain/Ids.ts"
import { publicBaseUrl } from "./PublicUrl.ts"

export const LibrarySearchHandlers = HttpApiBuilder.group(
  Api,
  "librarySearch",
  Effect.fn(function*(handlers) {
    const library = yield* LibrarySearch
    return handlers.handle("search", ({ payload }) =>
      Effect.gen(function*() {
        const { account } = yield* CurrentAccount
        return yield* library.search(account.id, payload)
      }))
  })
)

export const ClipDiscoveryHandlers = HttpApiBuilder.group(
  Api,
  "clipDiscovery",
  Effect.fn(function*(handlers) {
    const config = yield* ServerConfig
    const discovery = yield* ClipDiscovery
    return handlers
      .handle("candidates", ({ params, query, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentAccount
          return yield* discovery.candidates(caller, JobId.make(params.job_id), query.kind ?? "all", publicBaseUrl(config, request))
        }))
      .handle("search", ({ params, query, request }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentAccount
          return yield* discovery.search(caller, JobId.make(params.job_id), query.q, publicBaseUrl(config, request))
        }))
  })
)
