/** `/v1/credits`, `/v1/usage`, `/v1/checkout`, and the payment pages and provider webhook. */
import { Cause, Clock, Effect, Option, Redacted } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingConfig } from "../../services/config/BillingConfig.ts"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { Billing, effectivePlan } from "../../services/billing/Billing.ts"
import { type CheckoutRecord, Checkouts } from "../../services/billing/Checkouts.ts"
import { verifyPaddle } from "../../services/billing/PaddleSignature.ts"
import { UsageReport } from "../../services/billing/UsageReport.ts"
import { Api } from "../contract/api/Api.ts"
import { CreditsUnavailable, NotFound, RateLimited, UnknownSku, ValidationFailed } from "../contract/api/Errors.ts"
import { CurrentAccount } from "../contract/api/Security.ts"
import { catalog, sellable, Sku } from "../contract/domain/Catalog.ts"
import { plans } from "../contract/domain/Plan.ts"
import { Paywall } from "../../services/billing/Paywall.ts"
import { publicBaseUrl } from "./PublicUrl.ts"
import { makeUsageView } from "./UsageView.ts"

/** What unlimited plans report as hours left in their period. */
export const unlimitedHours = 1_000_000

const isSku = (value: string): value is Sku => (sellable as ReadonlyArray<string>).includes(value)

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
  `<meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}` +
  `table{border-collapse:collapse}td,th{padding:.3rem .8rem;border-bottom:1px solid #ddd;text-align:left}</style>` +
  `</head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`

export const BillingHandlers = HttpApiBuilder.group(
  Api,
  "billing",
  Effect.fn(function*(handlers) {
    const billing = yield* Billing
    const usage = yield* UsageReport
    const checkouts = yield* Checkouts
    const config = { ...(yield* BillingConfig), ...(yield* ServerConfig) }
    const paywall = yield* Paywall
    const usageView = yield* makeUsageView

    const view = (checkout: CheckoutRecord, base: string) => ({
      id: checkout.id,
      status: checkout.status,
      checkout_url: paywall.checkoutPageUrl(base, checkout.id),
      sku: checkout.sku,
      amount_usd: checkout.amount_usd,
      minutes: checkout.minutes,
      expires_at: Math.floor(checkout.expires_at.getTime() / 1000)
    })

    return handlers
      .handle("credits", () =>
        Effect.gen(function*() {
          const { account } = yield* CurrentAccount
          const now = yield* Clock.currentTimeMillis
          const plan = effectivePlan(account, now)
          const unlimited = plans[plan].unlimitedMinutes
          const balance = yield* billing.balanceMinutes(account.id)
          const figures = yield* usage.figures(account.id)
          const proPlan = plan === "workspace" ? "workspace-monthly" : plan === "enterprise" ? "enterprise" : null
          const expires = account.plan_expires_at?.toISOString() ?? null
          return {
            email: account.email,
            payg_hours_remaining: Math.round((Math.max(0, balance) / 60) * 10_000) / 10_000,
            pro_active: unlimited,
            pro_hours_remaining_in_period: unlimited ? unlimitedHours : 0,
            pro_plan: proPlan,
            pro_expires_at: unlimited ? expires : null,
            hours_used_lifetime: figures.hoursLifetime,
            workspace: {
              active: unlimited,
              plan: proPlan,
              unlimited_minutes: unlimited,
              concurrent_jobs: plans[plan].concurrentJobs,
              period_ends_at: unlimited ? expires : null
            }
          }
        }).pipe(
          // Never a wrong number: if the balance cannot be read, say so.
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause)
              ? Effect.interrupt
              : Effect.andThen(
                Effect.logError("balance lookup failed", cause),
                Effect.fail(new CreditsUnavailable({ error: "The balance cannot be read right now; retry in a minute." }))
              )
          )
        ))
      .handle("usage", () =>
        Effect.gen(function*() {
          const { account } = yield* CurrentAccount
          return yield* usageView(account.id)
        }))
      .handle("checkout", ({ payload, request }) =>
        Effect.gen(function*() {
          const { account } = yield* CurrentAccount
          if (!isSku(payload.sku)) {
            return yield* new UnknownSku({
              error: `"${payload.sku}" is not on sale; choose one of ${sellable.join(", ")}.`,
              sellable: [...sellable]
            })
          }
          const checkout = yield* checkouts.open(account.id, payload.sku, config.paymentProvider).pipe(
            Effect.catchTag("TooManyCheckouts", (e) =>
              Effect.fail(
                new RateLimited({
                  error: "An account can open six new pay links an hour; reuse an open one or retry later.",
                  code: "RATE_LIMITED",
                  retry_after: e.retryAfterSeconds
                })
              ))
          )
          return view(checkout, publicBaseUrl(config, request))
        }))
      .handle("checkoutStatus", ({ params, request }) =>
        Effect.gen(function*() {
          const { account } = yield* CurrentAccount
          const found = yield* checkouts.get(params.id)
          if (Option.isNone(found) || found.value.account_id !== account.id) {
            return yield* new NotFound({ error: "No checkout with this id belongs to the caller." })
          }
          return view(found.value, publicBaseUrl(config, request))
        }))
  })
)

export const PaymentPagesHandlers = HttpApiBuilder.group(
  Api,
  "paymentPages",
  Effect.fn(function*(handlers) {
    const checkouts = yield* Checkouts
    const config = yield* BillingConfig
    return handlers
      .handle("checkoutPage", ({ params }) =>
        Effect.gen(function*() {
          const found = yield* checkouts.get(params.id)
          if (Option.isNone(found)) return yield* new NotFound({ error: "No such checkout." })
          const checkout = found.value
          const product = catalog[checkout.sku as Sku]
          const state = checkout.status === "paid"
            ? "<p><strong>Paid.</strong> The credit is on the account.</p>"
            : checkout.status === "expired"
            ? "<p><strong>Expired.</strong> Ask for a new pay link.</p>"
            : config.paymentProvider === "paddle"
            ? `<p>Payment is handled by Paddle. Checkout reference: <code>${escapeHtml(checkout.id)}</code>.</p>`
            : `<p>Waiting for payment. The operator confirms it with ` +
              `<code>verbatim admin checkout confirm --id ${escapeHtml(checkout.id)}</code>.</p>`
          return page(
            product.name,
            `<table><tr><th>Item</th><td>${escapeHtml(product.name)}</td></tr>` +
              `<tr><th>Price</th><td>US$${checkout.amount_usd.toFixed(2)}</td></tr>` +
              `<tr><th>Minutes</th><td>${product.minutes > 0 ? product.minutes.toLocaleString("en-US") : "unlimited for " + product.subscriptionDays + " days"}</td></tr>` +
              `<tr><th>API access</th><td>${product.apiAccess ? "included" : "not included"}</td></tr>` +
              `<tr><th>Valid until</th><td>${checkout.expires_at.toISOString()}</td></tr></table>${state}`
          )
        }))
      .handle("pricing", () =>
        Effect.succeed(page(
          "Verbatim pricing",
          `<table><tr><th>sku</th><th>what</th><th>price</th></tr>` +
            sellable.map((sku) =>
              `<tr><td><code>${sku}</code></td><td>${escapeHtml(catalog[sku].name)}</td>` +
              `<td>US$${catalog[sku].amountUsd.toFixed(2)}</td></tr>`
            ).join("") +
            `</table><p>Open a pay link with <code>POST /v1/checkout {"sku": "…"}</code>. Pack minutes never expire.</p>`
        )))
      .handleRaw("paddleWebhook", ({ request }) =>
        Effect.gen(function*() {
          const body = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
          const secret = Option.map(config.paddleWebhookSecret, Redacted.value)
          const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          const invalid = (msg: string) =>
            new ValidationFailed({ error: msg, code: "VALIDATION_FAILED", detail: [{ loc: ["header", "paddle-signature"], msg }] })
          if (Option.isNone(secret)) return yield* invalid("Paddle notifications are not configured on this service.")
          if (!verifyPaddle(secret.value, request.headers["paddle-signature"], body, now)) {
            return yield* invalid("The Paddle-Signature does not verify.")
          }
          const event = yield* Effect.try(() =>
            JSON.parse(body) as { event_type?: string; data?: { id?: string; custom_data?: { checkout_id?: string } } }
          ).pipe(Effect.mapError(() => invalid("The notification body is not JSON.")))
          const checkoutId = event.data?.custom_data?.checkout_id
          if ((event.event_type === "transaction.completed" || event.event_type === "transaction.paid") && checkoutId) {
            // A notice for an unknown or expired checkout is acknowledged (Paddle must not retry it forever).
            yield* checkouts.pay(checkoutId, event.data?.id ?? null).pipe(
              Effect.catchTags({
                CheckoutNotFound: (e) => Effect.logWarning(e.message),
                CheckoutExpired: (e) => Effect.logWarning(e.message)
              })
            )
          }
          return { received: true }
        }))
  })
)

