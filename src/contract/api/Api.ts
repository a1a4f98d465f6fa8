/**
 * The Verbatim public API: one definition from which the server routes, the OpenAPI
 * document (`/openapi.json`), the docs page (`/docs`) and the typed client all derive.
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { AccountApi } from "./AccountApi.ts"
import { JobListApi, JobsApi, SubmitApi, UploadsApi, UploadTransferApi } from "./JobsApi.ts"
import { BillingApi, PaymentPagesApi } from "./BillingApi.ts"
import { SystemApi } from "./SystemApi.ts"
import { PlaybackApi, PlaybackMediaApi } from "./PlaybackApi.ts"
import { ClipMediaApi, ClipsApi } from "./ClipsApi.ts"
import { InsightsApi } from "./InsightsApi.ts"
import { ClipDiscoveryApi, LibrarySearchApi } from "./SearchApi.ts"
import { truthfulDocument } from "./Document.ts"
import { SpeakersApi } from "./SpeakersApi.ts"
import { ChatApi } from "./ChatApi.ts"
import { WebAccountApi, WebAdminApi, WebAuthApi } from "./WebApi.ts"

const groups = HttpApi.make("verbatim")
  .add(AccountApi)
  .add(SubmitApi)
  .add(UploadsApi)
  .add(UploadTransferApi)
  .add(JobListApi)
  .add(JobsApi)
  .add(BillingApi)
  .add(PaymentPagesApi)
  .add(SystemApi)
  .add(PlaybackApi).add(PlaybackMediaApi)
  .add(ClipsApi).add(ClipMediaApi)
  .add(InsightsApi)
  .add(LibrarySearchApi).add(ClipDiscoveryApi)
  .add(SpeakersApi).add(ChatApi)
  .add(WebAuthApi).add(WebAccountApi).add(WebAdminApi)

export class Api extends groups
  .annotateMerge(OpenApi.annotations({
    title: "Verbatim transcription API",
    version: "1.0.0",
    description: "Recorded audio and video to timestamped transcripts. Authenticate with `X-API-Key`.\n\n" +
      "Call the API from a server or a script, for example " +
      "`curl -s https://your-host/v1/me -H \"X-API-Key: $VERBATIM_KEY\"`. A key sent from a browser is " +
      "refused (403 `BROWSER_FORBIDDEN`, this page included, so that keys are never used from web pages), so " +
      "this reference has no \"try it\" button; each operation's code sample shows the request."
  }))
  .annotateMerge(truthfulDocument(groups))
{}
