import { Context } from "effect"

/**
 * Per-request facts the edge logs once the response is known. The auth middleware fills
 * in the account; nothing else writes here.
 */
export class RequestContext extends Context.Service<RequestContext, {
  readonly requestId: string
  accountId: string | null
}>()("verbatim/http/RequestContext") {}
