import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { PlanView } from "../domain/Plan.ts"
import { AllowGuest } from "./Security.ts"

export const Me = Schema.Struct({
  email: Schema.NullOr(Schema.String).annotate({ description: "Key owner's email; null for keyless callers." }),
  tier: Schema.Literals(["guest", "free", "paid"]),
  retention_days: Schema.Int.annotate({ description: "Days audio is kept after a job finishes (36500)." }),
  signed_in: Schema.Boolean.annotate({ description: "True only for a user sign-in; API-key callers see false." }),
  account_id: Schema.NullOr(Schema.String),
  plan: Schema.NullOr(PlanView)
})
export type Me = typeof Me.Type

export class AccountApi extends HttpApiGroup.make("account")
  .add(
    HttpApiEndpoint.get("me", "/v1/me", { success: Me }).annotateMerge(OpenApi.annotations({
      summary: "Caller identity and plan",
      description: "Works without a key (tier `guest`, plan null)."
    }))
  )
  .middleware(AllowGuest)
  .annotateMerge(OpenApi.annotations({ title: "Account" }))
{}
