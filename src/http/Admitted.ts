import { HttpServerResponse } from "effect/http"
import type { Admitted } from "../../services/intake/Admission.ts"

/** A new job answers 202 (the endpoint's success status); an idempotent replay 200 with `X-Idempotent-Replay`. */
export const admittedResponse = (admitted: Admitted) =>
  admitted.replay
    ? HttpServerResponse.jsonUnsafe(admitted.answer, { status: 200, headers: { "x-idempotent-replay": "true" } })
    : admitted.answer
