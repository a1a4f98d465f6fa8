/** Secrets for signed links, and which private addresses outbound fetches may reach. */
import { Config } from "effect"
import { list } from "./readers.ts"
import * as Setting from "./Setting.ts"

const fields = {
  signingSecret: Setting.optional({
    env: "VERBATIM_SIGNING_SECRET",
    read: Config.Redacted,
    shown: "derived",
    doc: "HMAC secret for signed links, used as is when set; otherwise derived (HKDF-SHA256) from `VERBATIM_SECRET_KEY`"
  }),
  secretKey: Setting.optional({
    env: "VERBATIM_SECRET_KEY",
    read: Config.Redacted,
    shown: "key file",
    doc: "the key signed-link secrets are derived from; unset → a random key in `<data dir>/secret.key` (mode 0600), " +
      "created once. Processes sharing a database but not a data dir must set the same value. Nothing secret is " +
      "stored in the database"
  }),
  fetchAllow: Setting.setting({
    env: "VERBATIM_FETCH_ALLOW",
    read: list,
    fallback: [],
    doc: "comma-separated hosts/CIDRs (optionally `:port`) that link fetching and webhooks may reach although private"
  })
}

export class SecurityConfig extends Setting.Area<SecurityConfig>()("verbatim/config/SecurityConfig", fields) {}
