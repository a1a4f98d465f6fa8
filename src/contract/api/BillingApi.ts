/** Balance, usage and pay links (`/v1/credits`, `/v1/usage`, `/v1/checkout`). */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { CreditsUnavailable, jsonBodyErrors, NotFound, RateLimited, UnknownSku, ValidationFailed } from "./Errors.ts"
import { RequireAccount } from "./Security.ts"

export const Workspace = Schema.Struct({
  active: Schema.Boolean.annotate({ description: "The unlimited plan (Workspace or Enterprise) is in force." }),
  plan: Schema.NullOr(Schema.String).annotate({ description: "`workspace-monthly`, `enterprise` or null." }),
  unlimited_minutes: Schema.Boolean,
  concurrent_jobs: Schema.Int,
  period_ends_at: Schema.NullOr(Schema.String).annotate({ description: "ISO time the paid period ends; null = no end." })
})

export const Balance = Schema.Struct({
  email: Schema.String,
  payg_hours_remaining: Schema.Number.annotate({ description: "Pack hours left (never expire)." }),
  pro_active: Schema.Boolean.annotate({ description: "A subscription plan is active." }),
  pro_hours_remaining_in_period: Schema.Number.annotate({
    description: "Hours left in the subscription period; unlimited plans report 1000000; 0 without one."
  }),
  pro_plan: Schema.NullOr(Schema.String),
  pro_expires_at: Schema.NullOr(Schema.String),
  hours_used_lifetime: Schema.Number,
  workspace: Workspace
})

export const LedgerEntry = Schema.Struct({
  kind: Schema.String.annotate({
    description: "`job_charge`, `clip_charge`, `clip_refund`, `purchase`, `plan_period` or `grant` (an operator's credit)."
  }),
  minutes: Schema.Number.annotate({ description: "Minutes added (positive) or charged (negative)." }),
  ref: Schema.NullOr(Schema.String).annotate({
    description: "The job id of a job charge, the clip id of a clip charge or refund, the pay link id of a purchase."
  }),
  note: Schema.NullOr(Schema.String),
  created_at: Schema.Number.annotate({ description: "Unix epoch seconds." })
})

export const Usage = Schema.Struct({
  minutes_today: Schema.Number.annotate({ description: "Audio minutes transcribed since 00:00 UTC." }),
  daily_allowance_minutes: Schema.NullOr(Schema.Number).annotate({
    description: "Minutes the account can still be billed today: its balance; null when unlimited."
  }),
  minutes_month_to_date: Schema.Number,
  queue_depth: Schema.Int.annotate({ description: "The account's jobs queued or processing." }),
  average_job_seconds: Schema.NullOr(Schema.Number).annotate({
    description: "Mean wall time from submit to done over the last 30 days; null without jobs."
  }),
  recent_charges: Schema.Array(LedgerEntry).annotate({
    description: "The balance's last 10 entries, newest first: charges and the credit that paid for them."
  })
})

export const CheckoutView = Schema.Struct({
  id: Schema.String,
  status: Schema.Literals(["pending", "paid", "expired"]),
  checkout_url: Schema.String,
  sku: Schema.String,
  amount_usd: Schema.Number,
  minutes: Schema.Int,
  expires_at: Schema.Number
})

export class BillingApi extends HttpApiGroup.make("billing")
  .add(
    HttpApiEndpoint.get("credits", "/v1/credits", { success: Balance, error: [CreditsUnavailable] })
      .annotateMerge(OpenApi.annotations({ summary: "Remaining balance" })),
    HttpApiEndpoint.get("usage", "/v1/usage", { success: Usage })
      .annotateMerge(OpenApi.annotations({ summary: "Usage today, this month, queue depth, average job time" })),
    HttpApiEndpoint.post("checkout", "/v1/checkout", {
      payload: Schema.Struct({ sku: Schema.String }),
      success: CheckoutView,
      error: [UnknownSku, RateLimited, ...jsonBodyErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "Open a pay link",
      description: "Valid 48 hours; the same sku while one is open returns the same link; six new links an hour."
    })),
    HttpApiEndpoint.get("checkoutStatus", "/v1/checkout/:id", {
      params: { id: Schema.String },
      success: CheckoutView,
      error: [NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "A pay link's current status" }))
  )
  .middleware(RequireAccount)
  .annotateMerge(OpenApi.annotations({ title: "Billing" }))
{}

const Html = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" }))

/** Pages for people (the pay link and the price list) and the payment provider's webhook. */
export class PaymentPagesApi extends HttpApiGroup.make("paymentPages")
  .add(
    HttpApiEndpoint.get("checkoutPage", "/checkout/:id", { params: { id: Schema.String }, success: Html, error: [NotFound] }),
    HttpApiEndpoint.get("pricing", "/pricing", { success: Html }),
    HttpApiEndpoint.post("paddleWebhook", "/webhooks/paddle", {
      success: Schema.Struct({ received: Schema.Boolean }),
      error: [ValidationFailed]
    }).annotateMerge(OpenApi.annotations({
      summary: "Paddle Billing notifications",
      description: "Verified with the `Paddle-Signature` header (ts/h1 HMAC-SHA256 of `ts:body`)."
    }))
  )
  .annotateMerge(OpenApi.annotations({ title: "Payment pages" }))
{}
