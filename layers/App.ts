/**
 * Composition root of a Verbatim process: configuration → storage → domain services →
 * HTTP server. `npm start` runs `AppLayer` with configuration from the environment;
 * tests build the same layer with the configuration areas' `layerWith(...)` in place of the environment.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { createServer } from "node:http"
import { Accounts } from "../services/Accounts.ts"
import { ApiKeys } from "../services/ApiKeys.ts"
import { DatabaseConfig } from "../services/config/DatabaseConfig.ts"
import { InsightsConfig } from "../services/config/InsightsConfig.ts"
import { SearchConfig } from "../services/config/SearchConfig.ts"
import { ServerConfig } from "../services/config/ServerConfig.ts"
import { SpeechConfig } from "../services/config/SpeechConfig.ts"
import { StorageConfig } from "../services/config/StorageConfig.ts"
import { AppLogger, startupFields } from "../services/observability/AppLogger.ts"
import { Billing } from "../services/billing/Billing.ts"
import { Checkouts } from "../services/billing/Checkouts.ts"
import { UsageReport } from "../services/billing/UsageReport.ts"
import { BillingHandlers, PaymentPagesHandlers } from "../src/http/BillingHandlers.ts"
import { RateLimiter } from "../services/RateLimiter.ts"
import { SampleQuota } from "../services/SampleQuota.ts"
import { Api } from "../src/contract/api/Api.ts"
import { AccountHandlers, SystemHandlers } from "../src/http/AccountHandlers.ts"
import { AllowGuestLive, RequireAccountLive } from "../src/http/Auth.ts"
import { WebOwnerLive, WebSignedInLive } from "../src/http/SessionAuth.ts"
import { WebAccountHandlers, WebAdminHandlers, WebAuthHandlers } from "../src/http/WebHandlers.ts"
import { Invites } from "../services/people/Invites.ts"
import { Members } from "../services/people/Members.ts"
import { Passwords } from "../services/people/Passwords.ts"
import { Sessions } from "../services/people/Sessions.ts"
import { SignIn } from "../services/people/SignIn.ts"
import { SignUp } from "../services/people/SignUp.ts"
import { EdgeMiddleware } from "../src/http/Edge.ts"
import { DatabaseLayer } from "./Database.ts"
import { FetchLayer, InsightsGeneratorLayer, llmOptionsFrom } from "./Local.ts"
import { clusterOptionsFrom, WorkClusterLayer } from "./Cluster.ts"
import { IdempotencyKeys } from "../services/jobs/IdempotencyKeys.ts"
import { JobDispatcher, JobReconciler, UnfinishedJobs } from "../services/jobs/JobDispatcher.ts"
import { JobEvents } from "../services/jobs/JobEvents.ts"
import { JobRuns } from "../services/jobs/JobRuns.ts"
import { JobStore } from "../services/jobs/JobStore.ts"
import { JobWatchdogLayer } from "../services/jobs/JobWatchdog.ts"
import { TranscribeTask } from "../services/jobs/TranscribeTask.ts"
import { DiarizeTask } from "../services/jobs/DiarizeTask.ts"
import { WebhookDeliveryTask } from "../services/jobs/WebhookDeliveryTask.ts"
import { InsightsInvalidation } from "../services/insights/InsightsInvalidation.ts"
import { InsightsStore } from "../services/insights/InsightsStore.ts"
import { InsightsTask } from "../services/insights/InsightsTask.ts"
import { JobInsights } from "../services/insights/JobInsights.ts"
import { InsightsHandlers } from "../src/http/InsightsHandlers.ts"
import { MeiliSearchBackend } from "../search/MeiliSearchBackend.ts"
import { PostgresSearchBackend } from "../search/PostgresSearchBackend.ts"
import { QueryTranslator } from "../search/QueryTranslator.ts"
import { SearchIndex } from "../search/SearchIndex.ts"
import { ClipDiscovery } from "../services/search-index/ClipDiscovery.ts"
import { IndexTask } from "../services/search-index/IndexTask.ts"
import { LibraryEmbedder } from "../services/search-index/LibraryEmbedder.ts"
import { LibrarySearch } from "../services/search-index/LibrarySearch.ts"
import { SearchIndexing } from "../services/search-index/SearchIndexing.ts"
import { SearchReindex } from "../services/search-index/SearchReindex.ts"
import { ClipDiscoveryHandlers, LibrarySearchHandlers } from "../src/http/SearchHandlers.ts"
import { ChatAnswerer } from "../services/chat/ChatAnswerer.ts"
import { ChatStore } from "../services/chat/ChatStore.ts"
import { JobChat } from "../services/chat/JobChat.ts"
import { JobSpeakers } from "../services/speakers/JobSpeakers.ts"
import { SpeakerNameStore } from "../services/speakers/SpeakerNameStore.ts"
import { ChatHandlers } from "../src/http/ChatHandlers.ts"
import { SpeakerHandlers } from "../src/http/SpeakerHandlers.ts"
import { TranscriptStore } from "../services/jobs/TranscriptStore.ts"
import { JobEventFeed } from "../services/work/JobEventFeed.ts"
import { JobEventLog } from "../services/work/JobEventLog.ts"
import { TaskHandlers } from "../services/work/TaskHandlers.ts"
import { TaskStore } from "../services/work/TaskStore.ts"
import { Signer } from "../services/security/Signer.ts"
import { MediaStorage } from "../services/storage/MediaStorage.ts"
import { SharedMedia } from "../services/storage/SharedMedia.ts"
import { TranscriptFormats } from "../services/TranscriptFormats.ts"
import { JobAccess } from "../services/access/JobAccess.ts"
import { JobCommands } from "../services/access/JobCommands.ts"
import { JobQueries } from "../services/access/JobQueries.ts"
import { Paywall } from "../services/billing/Paywall.ts"
import { Admission } from "../services/intake/Admission.ts"
import { MediaIntake } from "../services/intake/MediaIntake.ts"
import { PromptTokens } from "../services/intake/PromptTokens.ts"
import { SubmitJob } from "../services/intake/SubmitJob.ts"
import { ModelRegistryLayer } from "./Pipeline.ts"
import { TranscriptAccess } from "../services/transcripts/TranscriptAccess.ts"
import { UploadTickets } from "../services/uploads/UploadTickets.ts"
import { JobHandlers, JobListHandlers } from "../src/http/JobHandlers.ts"
import { SubmitHandlers } from "../src/http/SubmitHandlers.ts"
import { PlaybackHandlers, PlaybackMediaHandlers } from "../src/http/PlaybackHandlers.ts"
import { LinkTokens } from "../services/playback/LinkTokens.ts"
import { Playback } from "../services/playback/Playback.ts"
import { PlaybackStore } from "../services/playback/PlaybackStore.ts"
import { ClipRenderer } from "../pipeline/render/ClipRenderer.ts"
import { ClipCharges } from "../services/clips/ClipCharges.ts"
import { Clips } from "../services/clips/Clips.ts"
import { ClipStore } from "../services/clips/ClipStore.ts"
import { RenderClipTask } from "../services/clips/RenderClipTask.ts"
import { WordAlignment } from "../services/clips/WordAlignment.ts"
import { ClipHandlers, ClipMediaHandlers } from "../src/http/ClipHandlers.ts"
import { UploadHandlers, UploadTransferHandlers } from "../src/http/UploadHandlers.ts"
import { McpRoutes } from "../src/http/McpHandlers.ts"
import { OpenAiRoutes } from "../src/http/OpenAiTranscriptions.ts"
import { MetricsRoute, ReadyRoute, RequestMetrics } from "../src/http/OpsRoutes.ts"
import { DocsRoute } from "../src/http/DocsPage.ts"
import { WebAssetRoutes } from "../src/http/WebAssets.ts"
import { Readiness } from "../services/ops/Readiness.ts"
import { ServiceMetrics } from "../services/ops/ServiceMetrics.ts"

/** Storage plus the domain services every entry point (server, admin CLI) needs. */
export const DomainLayer = Layer.mergeAll(
  Accounts.layer,
  ApiKeys.layer,
  RateLimiter.layer,
  SampleQuota.layer,
  JobStore.layer,
  JobRuns.layer,
  Checkouts.layer,
  UsageReport.layer,
  UploadTickets.layer,
  Signer.layer,
  JobEvents.layer,
  MediaStorage.layer,
  TranscriptFormats.layer,
  InsightsStore.layer,
  SpeakerNameStore.layer
).pipe(
  Layer.provideMerge(TranscriptStore.layer),
  Layer.provideMerge(Layer.mergeAll(Billing.layer, IdempotencyKeys.layer, JobEventLog.layer, TaskStore.layer)),
  Layer.provideMerge(FetchLayer),
  Layer.provideMerge(DatabaseLayer)
)

/**
 * Library search: `SearchIndex` over Meilisearch when `MEILI_URL` is set (the server must answer
 * at start), else over the database (pgvector + full text, migration 0006); MiniLM from
 * `VERBATIM_MODELS_DIR`, loaded on first use; questions also searched in translation through
 * Apertium when `VERBATIM_APERTIUM_DIR` holds its English–Spanish pair. Also provides the
 * `Embedder` (clip candidates).
 */
export const SearchLayer = SearchIndex.layer.pipe(
  Layer.provideMerge(Layer.unwrap(SpeechConfig.useSync((config) => LibraryEmbedder.layer({ modelsDir: config.modelsDir })))),
  Layer.provide(Layer.unwrap(SearchConfig.useSync((config) => QueryTranslator.layerFor(config.apertiumDir)))),
  Layer.provideMerge(Layer.unwrap(SearchConfig.useSync((config) =>
    Option.isSome(config.meiliUrl)
      ? MeiliSearchBackend.layer({
        url: config.meiliUrl.value,
        apiKey: Option.isSome(config.meiliApiKey) ? Redacted.value(config.meiliApiKey.value) : undefined
      })
      : PostgresSearchBackend.layer()
  )))
)

/** `verbatim admin search reindex`: builds `SearchLayer` only when it runs (needs `DomainLayer`). */
export const SearchReindexLayer = SearchReindex.layer(SearchLayer)

/** Clip storage, charges and the renderer (native ffmpeg when present, else WASM; `VERBATIM_DECODER`). */
const ClipWorkLayer = Layer.mergeAll(ClipStore.layer, ClipCharges.layer, WordAlignment.layer).pipe(
  Layer.provideMerge(Layer.unwrap(SpeechConfig.useSync((config) => ClipRenderer.layer({ backend: config.decoder }))))
)

/**
 * The task kinds this process runs: ONE list. Adding a kind is its file (a `taskKind`
 * declaration and its handler) plus one entry here; the layer needs what the listed handlers
 * need, so the compiler checks each is provided for.
 */
export const taskKinds = [TranscribeTask, RenderClipTask, DiarizeTask, InsightsTask, IndexTask, WebhookDeliveryTask] as const

/**
 * Work in this process: the task engine (cluster runner, `Task` entity, claim loop with slots per kind)
 * with `taskKinds` (webhook deliveries among them), the job dispatcher, and the job event feed
 * (with its consumers) and the housekeeping watchdog, each run by one process of the cluster
 * (singletons). Needs a `Transcriber`.
 */
const TaskKindsLayer = TaskHandlers.layer(taskKinds).pipe(Layer.provide(Layer.merge(ClipWorkLayer, InsightsGeneratorLayer)))

export const WorkLayer = Layer.mergeAll(JobWatchdogLayer, JobEventFeed.loop, JobReconciler).pipe(
  Layer.provideMerge(JobEventFeed.layer<Effect.Services<typeof JobEvents.webhookConsumer | typeof InsightsInvalidation>>(
    JobEvents.webhookConsumer,
    InsightsInvalidation,
    SearchIndexing
  )),
  Layer.provideMerge(Layer.mergeAll(JobDispatcher.layer, UnfinishedJobs.layer)),
  Layer.provideMerge(Layer.unwrap(DatabaseConfig.useSync((config) => WorkClusterLayer(clusterOptionsFrom(config), TaskKindsLayer))))
)

/** The use cases the HTTP adapters call (they need the job runner and the pipeline's probe). */
const UseCasesLayer = Layer.mergeAll(
  SubmitJob.layer.pipe(Layer.provideMerge(Layer.merge(Admission.layer, MediaIntake.layer))),
  JobQueries.layer,
  JobCommands.layer,
  TranscriptAccess.layer,
  Playback.layer
).pipe(
  Layer.provideMerge(Layer.mergeAll(JobAccess.layer, LinkTokens.layer, PlaybackStore.layerLocal, ClipStore.layer, ClipCharges.layer)),
  Layer.provideMerge(Paywall.layer),
  // Prompts are counted in the configured model's tokens at submit (its tokenizer, read on first use).
  Layer.provideMerge(PromptTokens.layer.pipe(Layer.provide(ModelRegistryLayer)))
)

/** "Ask this recording" writes its answer with the insights' LLM endpoint, when one is configured. */
const ChatAnswererLayer = Layer.unwrap(InsightsConfig.useSync((config) => ChatAnswerer.layer(llmOptionsFrom(config))))

/** Clips, speaker names and chat build on the transcript reads and job access above. */
const ClipUseCasesLayer = Layer.mergeAll(
  Clips.layer,
  ClipDiscovery.layer.pipe(Layer.provideMerge(LibrarySearch.layer)),
  JobSpeakers.layer,
  JobChat.layer.pipe(Layer.provide(Layer.mergeAll(LibrarySearch.layer, ChatStore.layer, ChatAnswererLayer))),
  Layer.unwrap(InsightsConfig.useSync((config) => JobInsights.layer({ waitMs: config.insightsWaitSeconds * 1000 })))
).pipe(Layer.provideMerge(UseCasesLayer))

/** People on the website (issue 23): sign-up, sign-in, sessions, invites, the owner's account list. */
const PeopleLayer = Layer.mergeAll(SignUp.layer, SignIn.layer, Members.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Invites.layer, Sessions.layer, Passwords.layer))
)

const ApiRoutes = HttpApiBuilder.layer(Api, { openapiPath: "/openapi.json" }).pipe(
  Layer.provide([
    AccountHandlers,
    SystemHandlers,
    SubmitHandlers,
    UploadHandlers,
    UploadTransferHandlers,
    JobListHandlers,
    JobHandlers,
    BillingHandlers,
    PaymentPagesHandlers,
    PlaybackHandlers,
    PlaybackMediaHandlers,
    ClipHandlers,
    ClipMediaHandlers,
    InsightsHandlers,
    LibrarySearchHandlers,
    ClipDiscoveryHandlers,
    SpeakerHandlers,
    ChatHandlers,
    WebAuthHandlers,
    WebAccountHandlers,
    WebAdminHandlers
  ]),
  Layer.provide([RequireAccountLive, AllowGuestLive, WebSignedInLive, WebOwnerLive]),
  Layer.provide(PeopleLayer),
  Layer.provide(ClipUseCasesLayer)
)

/** `/mcp` and the OpenAI-compatible route (Bearer key) call the same use cases as the REST handlers. */
const BearerRoutes = Layer.mergeAll(McpRoutes, OpenAiRoutes).pipe(Layer.provide(ClipUseCasesLayer))

/** `/readyz`, and `/metrics` on the API port unless `VERBATIM_METRICS_PORT` (none with `VERBATIM_METRICS=false`). */
const OpsLayer = Layer.unwrap(ServerConfig.useSync((config) =>
  !config.metrics
    ? ReadyRoute
    : Option.isSome(config.metricsPort)
    ? Layer.mergeAll(ReadyRoute, RequestMetrics)
    : Layer.mergeAll(ReadyRoute, RequestMetrics, MetricsRoute)
)).pipe(Layer.provide(Layer.mergeAll(Readiness.layer, ServiceMetrics.layer)))

/** `/metrics` alone on its own port, when `VERBATIM_METRICS_PORT` is set. */
const MetricsServerLayer = Layer.unwrap(ServerConfig.useSync((config) =>
  config.metrics && Option.isSome(config.metricsPort)
    ? HttpRouter.serve(MetricsRoute, { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provide(NodeHttpServer.layer(createServer, { port: config.metricsPort.value, host: config.host })),
      Layer.provide(ServiceMetrics.layer)
    )
    : Layer.empty
))

const Routes = Layer.mergeAll(ApiRoutes, BearerRoutes, OpsLayer, DocsRoute, WebAssetRoutes, EdgeMiddleware)

const HttpServerLayer = Layer.unwrap(
  ServerConfig.useSync((config) =>
    NodeHttpServer.layer(createServer, {
      port: config.port,
      host: config.host,
      gracefulShutdownTimeout: Duration.seconds(config.shutdownGraceSeconds)
    })
  )
)

/**
 * The HTTP service and job execution on top of the domain. Requires the configuration areas (services/config),
 * `AppLogger`, and the pipeline (`Transcriber`, `MediaDecoder`: see layers/Pipeline.ts).
 */
export const ServerLayer = Layer.merge(
  HttpRouter.serve(Routes, { disableLogger: true, disableListenLog: true }),
  MetricsServerLayer
).pipe(
  Layer.provideMerge(HttpServerLayer),
  Layer.provideMerge(WorkLayer),
  // Before any work starts: refuses to start on a media directory the other processes do not share.
  Layer.provideMerge(SharedMedia.layer),
  Layer.provideMerge(SearchLayer),
  Layer.provideMerge(DomainLayer),
  Layer.provide(AppLogger.effectLogger)
)

/**
 * Logs the bound address (the real port when configured as 0) once the server is up, with the
 * model, decoder and database it runs on.
 */
export const announce = Effect.gen(function*() {
  const logger = yield* AppLogger
  const server = yield* HttpServer.HttpServer
  const config = { ...(yield* SpeechConfig), ...(yield* DatabaseConfig), ...(yield* StorageConfig) }
  logger.pino.info({ msg: "listening", url: HttpServer.formatAddress(server.address), docs: "/docs", ...startupFields(config) })
})

export { FetchLayer, InsightsGeneratorLayer } from "./Local.ts"
