/** Library search: the backend (a Meilisearch server, or unset: the database) and the question translator. */
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
  }),
  apertiumDir: Setting.setting({
    env: "VERBATIM_APERTIUM_DIR",
    read: Config.String,
    fallback: "/usr/share/apertium",
    doc: "Apertium's data folder: with its English–Spanish pair installed there (`apt-get install apertium apertium-eng-spa`) a search question in Spanish is also searched in English and back; `none` turns that off"
  })
}

export class SearchConfig extends Setting.Area<SearchConfig>()("verbatim/config/SearchConfig", fields) {}
