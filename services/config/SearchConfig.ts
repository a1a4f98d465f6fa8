/** Library search backend: a Meilisearch server, or (unset) the database. */
import { Config } from "effect"
import { url } from "./readers.ts"
import * as Setting from "./Setting.ts"

const fields = {
  meiliUrl: Setting.optional({
    env: "MEILI_URL",
    read: url,
    doc: "use a Meilisearch server for library and clip search instead of Postgres"
  }),
  meiliApiKey: Setting.optional({
    env: "MEILI_API_KEY",
    read: Config.Redacted,
    doc: "its API key"
  })
}

export class SearchConfig extends Setting.Area<SearchConfig>()("verbatim/config/SearchConfig", fields) {}
