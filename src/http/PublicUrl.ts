import { Option } from "effect"
import type { HttpServerRequest } from "effect/http"
import { ServerConfig } from "../../services/config/ServerConfig.ts"

/** The API root for links we hand out: `VERBATIM_PUBLIC_URL`, else the Host the caller used. */
export const publicBaseUrl = (config: ServerConfig["Service"], request: HttpServerRequest.HttpServerRequest) =>
  Option.getOrElse(config.publicUrl, () => `http://${request.headers["host"] ?? `${config.host}:${config.port}`}`)
