/** Who confirms payments, and the Paddle webhook secret when Paddle does. */
import { Config } from "effect"
import * as Setting from "./Setting.ts"

const fields = {
  paymentProvider: Setting.setting<"builtin" | "paddle">({
    env: "VERBATIM_PAYMENT_PROVIDER",
    read: (env) => Config.Literals(["builtin", "paddle"], env),
    fallback: "builtin",
    doc: "`builtin` (operator confirms with the CLI) or `paddle`"
  }),
  paddleWebhookSecret: Setting.optional({
    env: "VERBATIM_PADDLE_WEBHOOK_SECRET",
    read: Config.Redacted,
    doc: "Paddle notification secret; verifies `Paddle-Signature` on `POST /webhooks/paddle`"
  })
}

export class BillingConfig extends Setting.Area<BillingConfig>()("verbatim/config/BillingConfig", fields) {}
