/**
 * Operations endpoints, outside `/v1` and without a key (like `/healthz`):
 * - `GET /readyz`: 200 `{ status: "ready", checks }`, or 503 `{ error, code: "NOT_READY_TO_SERVE",
 *   failing, checks }` naming each failing check (services/ops/Readiness.ts);
 * - `GET /metrics`: Prometheus text (services/ops/ServiceMetrics.ts), on the API port or its own;
 * - `RequestMetrics`: counts and times every request by route and status.
 */
import { Cause, Effect, Exit } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Readiness } from "../../services/ops/Readiness.ts"
import { ServiceMetrics } from "../../services/ops/ServiceMetrics.ts"
import { classifyFailure } from "./ErrorResponses.ts"

export const ReadyRoute = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const readiness = yield* Readiness
    yield* router.add(
      "GET",
      "/readyz",
      Effect.map(readiness.check, (report) => {
        if (report.ready) return HttpServerResponse.jsonUnsafe({ status: "ready", checks: report.checks })
        const failing = report.checks.filter((check) => !check.ok)
        return HttpServerResponse.jsonUnsafe({
          error: `Not ready: ${failing.map((check) => `${check.name} (${check.detail})`).join("; ")}.`,
          code: "NOT_READY_TO_SERVE",
          failing: failing.map((check) => check.name),
          checks: report.checks
        }, { status: 503, headers: { "cache-control": "no-store" } })
      })
    )
  })
)

export const MetricsRoute = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const metrics = yield* ServiceMetrics
    yield* router.add(
      "GET",
      "/metrics",
      Effect.map(metrics.render, (text) =>
        HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4; charset=utf-8" }))
    )
  })
)

/** Records every answered request; a failure is counted with the status the edge will give it. */
export const RequestMetrics = HttpRouter.middleware(
  Effect.gen(function*() {
    const metrics = yield* ServiceMetrics
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const started = performance.now()
        return yield* httpEffect.pipe(
          Effect.onExit((exit) => {
            if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return Effect.void
            const status = Exit.isSuccess(exit) ? exit.value.status : classifyFailure(exit.cause).response.status
            return metrics.recordRequest({
              method: request.method,
              path: request.url.split("?")[0] ?? request.url,
              status,
              seconds: (performance.now() - started) / 1000
            })
          })
        )
      })
  }),
  { global: true }
)
