/**
 * `/docs`: the API reference (Scalar) rendered from the same definition as `/openapi.json`.
 * It is a reader, not a client: the edge refuses an `X-API-Key` from any browser, the service's
 * own pages included (403 `BROWSER_FORBIDDEN`, see Edge.ts), so that keys are never used from
 * web pages, and a "try it" button here would only ever show that refusal. Making it work would
 * mean accepting keys from this page, which is what the refusal exists to prevent, so the request
 * buttons are turned off and the page's introduction (Api.ts) and its code samples show the call
 * with curl instead.
 */
import { HttpApiScalar } from "effect/http-api"
import { Api } from "../contract/api/Api.ts"

/** Scalar options beyond the ones Effect types (`hideClientButton` hides the sidebar's "open API client"). */
const scalar: HttpApiScalar.ScalarConfig & { readonly hideClientButton: boolean } = {
  hideTestRequestButton: true,
  hideClientButton: true,
  showOperationId: true
}

export const DocsRoute = HttpApiScalar.layer(Api, { path: "/docs", scalar })
