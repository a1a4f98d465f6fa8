import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"

/** Liveness for load balancers; outside `/v1` and unauthenticated, like every internal path. */
export class SystemApi extends HttpApiGroup.make("system")
  .add(HttpApiEndpoint.get("health", "/healthz", { success: Schema.Struct({ status: Schema.Literal("ok") }) }))
  .annotateMerge(OpenApi.annotations({ title: "System" }))
{}
