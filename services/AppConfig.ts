/**
 * The one typed configuration of a Verbatim process, read from the environment once,
 * at the layer edge. Every setting is documented in the README's configuration table;
 * a `VERBATIM_*` variable this process does not know is refused at start, so a typo
 * never silently falls back to a default.
 */
import { Config, ConfigProvider, Context, Effect, Layer, Option, Redacted, Schema } from "effect"

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "silent"

export interface AppConfigShape {
  readonly host: string
  readonly port: number
  /** Root of everything the embedded mode keeps on disk (database, uploads, media). */
  readonly dataDir: string
  /**
   * Where submitted media (uploads, audio, clips) lives; unset: `dataDir/media`. Processes on
   * one Postgres must all see the same directory (checked at start, services/storage/SharedMedia.ts).
   */
  readonly mediaDir: Option.Option<string>
  /** Set: that Postgres. Unset: embedded PGlite under `dataDir/pg`. */
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /** Base URL clients reach this service at; used in links the API hands out. */
  readonly publicUrl: Option.Option<string>
  /** HMAC secret for signed links, used as is; when unset it is derived from `secretKey`. */
  readonly signingSecret: Option.Option<Redacted.Redacted>
  /**
   * The key signing secrets are derived from (never stored). Unset: a key file created once in
   * `dataDir` (mode 0600); processes sharing a database but not a data dir must set it alike.
   */
  readonly secretKey: Option.Option<Redacted.Redacted>
  readonly rateLimitPerMinute: number
  readonly enterpriseRateLimitPerMinute: number
  readonly batchStatusPerMinute: number
  readonly samplesPerDay: number
  /** Use the first `X-Forwarded-For` hop as the client address (behind a trusted proxy only). */
  readonly trustProxy: boolean
  readonly logLevel: LogLevel
  /** Jobs transcribed at once by this process (one run saturates two cores). */
  readonly workers: number
  /** Cluster runner address when several processes share one Postgres. */
  readonly runnerHost: string
  readonly runnerPort: number
  /** Hosts/CIDRs (optionally with :port) that link fetching and webhooks may reach although private. */
  readonly fetchAllow: ReadonlyArray<string>
  readonly decoder: "auto" | "wasm" | "native"
  readonly modelsDir: string
  /** Where a model missing from `modelsDir` is downloaded from on first use. */
  readonly modelsUrl: string
  readonly model: string
  /**
   * Encoder weights. `auto`: int8 for whisper-base (measured faster and at least as accurate
   * here, bench/README.md), fp32 for tiny.en (its int8 encoder truncates robotic clips).
   */
  readonly encoder: "auto" | "fp32" | "q8"
  readonly threads: number
  /**
   * Beam width of Whisper's first decoding pass: 1 (default) is greedy; 5 is faster-whisper's
   * default beam search (slower, bench/README.md has the measured trade-off).
   */
  readonly beamSize: number
  /**
   * Whisper windows (≤ 27 s of speech each) decoded together: memory against speed. whisper-base,
   * 10-minute file: 1 → 717 MB peak, 25.5 s; 4 (default) → 930 MB, 18.9 s; 8 → 1.37 GB, no faster.
   */
  readonly batchSize: number
  /**
   * When windows are decoded one at a time (beam search, or a batch size of 1), prompt each with
   * the text before it, as faster-whisper's `condition_on_previous_text`. Off by default: on
   * bench/asr's recording it was no more accurate and slower (whisper-base, beam 5: 32.5 → 48.5 s in-process) (bench/README.md).
   */
  readonly conditionOnPreviousText: boolean
  /**
   * An OpenAI-compatible chat endpoint (API root, e.g. `http://localhost:11434/v1`) for the
   * abstractive insights summary and chapter titles; unset: extractive insights only.
   */
  readonly llmUrl: Option.Option<string>
  readonly llmModel: string
  readonly llmKey: Option.Option<Redacted.Redacted>
  /** Longest wait for one LLM call. */
  readonly llmTimeoutSeconds: number
  /** How long `GET /v1/jobs/{id}/insights` waits for a generation before answering 503 INSIGHTS_PENDING. */
  readonly insightsWaitSeconds: number
  /** A processing job whose heartbeat is older than this ends PROCESSING_STALLED. */
  readonly jobStallSeconds: number
  /** A job processing longer than this ends PROCESSING_TIMEOUT. */
  readonly jobTimeoutSeconds: number
  /** Upload temporaries and media folders with no job or ticket are removed once idle this long. */
  readonly uploadOrphanSeconds: number
  /** Who confirms payments: `builtin` (the operator, admin CLI) or `paddle` (signed webhooks). */
  readonly paymentProvider: "builtin" | "paddle"
  readonly paddleWebhookSecret: Option.Option<Redacted.Redacted>
  /** Serve `/metrics` (Prometheus text, no key). */
  readonly metrics: boolean
  /** Serve `/metrics` on this port (on `host`) instead of the API port. */
  readonly metricsPort: Option.Option<number>
  /** On SIGTERM: how long in-flight requests and running jobs get to finish before the process exits anyway. */
  readonly shutdownGraceSeconds: number
  /** A Meilisearch server for library search (`MEILI_URL`); unset: the database (pgvector + full text). */
  readonly meiliUrl: Option.Option<string>
  /** Its API key (`MEILI_API_KEY`). */
  readonly meiliApiKey: Option.Option<Redacted.Redacted>
}

/** Every variable this process reads. Extend it together with the README table. */
export const knownVariables: ReadonlyArray<string> = [
  "VERBATIM_HOST",
  "VERBATIM_PORT",
  "VERBATIM_DATA_DIR",
  "VERBATIM_MEDIA_DIR",
  "VERBATIM_PUBLIC_URL",
  "VERBATIM_SIGNING_SECRET",
  "VERBATIM_SECRET_KEY",
  "VERBATIM_RATE_LIMIT_PER_MINUTE",
  "VERBATIM_ENTERPRISE_RATE_LIMIT_PER_MINUTE",
  "VERBATIM_BATCH_STATUS_PER_MINUTE",
  "VERBATIM_SAMPLES_PER_DAY",
  "VERBATIM_TRUST_PROXY",
  "VERBATIM_LOG_LEVEL",
  "VERBATIM_WORKERS",
  "VERBATIM_RUNNER_HOST",
  "VERBATIM_RUNNER_PORT",
  "VERBATIM_FETCH_ALLOW",
  "VERBATIM_DECODER",
  "VERBATIM_MODELS_DIR",
  "VERBATIM_MODELS_URL",
  "VERBATIM_MODEL",
  "VERBATIM_THREADS",
  "VERBATIM_BEAM_SIZE",
  "VERBATIM_BATCH_SIZE",
  "VERBATIM_CONDITION_ON_PREVIOUS_TEXT",
  "VERBATIM_ENCODER",
  "VERBATIM_LLM_URL",
  "VERBATIM_LLM_MODEL",
  "VERBATIM_LLM_KEY",
  "VERBATIM_LLM_TIMEOUT_SECONDS",
  "VERBATIM_INSIGHTS_WAIT_SECONDS",
  "VERBATIM_JOB_STALL_SECONDS",
  "VERBATIM_JOB_TIMEOUT_SECONDS",
  "VERBATIM_UPLOAD_ORPHAN_SECONDS",
  "VERBATIM_PAYMENT_PROVIDER",
  "VERBATIM_PADDLE_WEBHOOK_SECRET",
  "VERBATIM_METRICS",
  "VERBATIM_METRICS_PORT",
  "VERBATIM_SHUTDOWN_GRACE_SECONDS"
]

/**
 * Variables the README documents for clients (curl examples, the typed client): a shell that
 * follows the quick start exports them and then runs `npm start` or the admin CLI, so the
 * strict check passes them by. The server never reads them.
 */
export const clientVariables: ReadonlyArray<string> = ["VERBATIM_KEY"]

const positiveInt = (name: string, fallback: number) =>
  Config.schema(Schema.Int.check(Schema.isGreaterThan(0)), name).pipe(Config.withDefault(fallback))

const config = Config.all({
  host: Config.String("VERBATIM_HOST").pipe(Config.withDefault("127.0.0.1")),
  // 0 asks the OS for a free port (the bound one is logged as `listening`).
  port: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 })), "VERBATIM_PORT").pipe(
    Config.withDefault(8080)
  ),
  dataDir: Config.NonEmptyString("VERBATIM_DATA_DIR").pipe(Config.withDefault("./data")),
  mediaDir: Config.option(Config.NonEmptyString("VERBATIM_MEDIA_DIR")),
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")),
  publicUrl: Config.option(Config.URL("VERBATIM_PUBLIC_URL").pipe(Config.map((url) => url.href.replace(/\/$/, "")))),
  signingSecret: Config.option(Config.Redacted("VERBATIM_SIGNING_SECRET")),
  secretKey: Config.option(Config.Redacted("VERBATIM_SECRET_KEY")),
  rateLimitPerMinute: positiveInt("VERBATIM_RATE_LIMIT_PER_MINUTE", 60),
  enterpriseRateLimitPerMinute: positiveInt("VERBATIM_ENTERPRISE_RATE_LIMIT_PER_MINUTE", 120),
  batchStatusPerMinute: positiveInt("VERBATIM_BATCH_STATUS_PER_MINUTE", 600),
  samplesPerDay: positiveInt("VERBATIM_SAMPLES_PER_DAY", 3),
  trustProxy: Config.Boolean("VERBATIM_TRUST_PROXY").pipe(Config.withDefault(false)),
  logLevel: Config.Literals(["trace", "debug", "info", "warn", "error", "silent"], "VERBATIM_LOG_LEVEL").pipe(
    Config.withDefault("info" as const)
  ),
  workers: positiveInt("VERBATIM_WORKERS", 1),
  runnerHost: Config.String("VERBATIM_RUNNER_HOST").pipe(Config.withDefault("127.0.0.1")),
  runnerPort: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65535 })), "VERBATIM_RUNNER_PORT").pipe(
    Config.withDefault(34431)
  ),
  fetchAllow: Config.String("VERBATIM_FETCH_ALLOW").pipe(
    Config.map((list) => list.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")),
    Config.withDefault([] as ReadonlyArray<string>)
  ),
  decoder: Config.Literals(["auto", "wasm", "native"], "VERBATIM_DECODER").pipe(Config.withDefault("auto" as const)),
  modelsDir: Config.NonEmptyString("VERBATIM_MODELS_DIR").pipe(Config.withDefault("../shared/models")),
  modelsUrl: Config.URL("VERBATIM_MODELS_URL").pipe(
    Config.map((url) => url.href.replace(/\/$/, "")),
    Config.withDefault("https://huggingface.co")
  ),
  model: Config.Literals(["whisper-base", "whisper-tiny.en"], "VERBATIM_MODEL").pipe(
    Config.withDefault("whisper-base" as const)
  ),
  threads: positiveInt("VERBATIM_THREADS", 2),
  beamSize: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 16 })), "VERBATIM_BEAM_SIZE").pipe(
    Config.withDefault(1)
  ),
  batchSize: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 16 })), "VERBATIM_BATCH_SIZE").pipe(
    Config.withDefault(4)
  ),
  conditionOnPreviousText: Config.Boolean("VERBATIM_CONDITION_ON_PREVIOUS_TEXT").pipe(Config.withDefault(false)),
  encoder: Config.Literals(["auto", "fp32", "q8"], "VERBATIM_ENCODER").pipe(Config.withDefault("auto" as const)),
  llmUrl: Config.option(Config.URL("VERBATIM_LLM_URL").pipe(Config.map((url) => url.href.replace(/\/$/, "")))),
  llmModel: Config.NonEmptyString("VERBATIM_LLM_MODEL").pipe(Config.withDefault("llama3.1")),
  llmKey: Config.option(Config.Redacted("VERBATIM_LLM_KEY")),
  llmTimeoutSeconds: positiveInt("VERBATIM_LLM_TIMEOUT_SECONDS", 120),
  insightsWaitSeconds: positiveInt("VERBATIM_INSIGHTS_WAIT_SECONDS", 60),
  jobStallSeconds: positiveInt("VERBATIM_JOB_STALL_SECONDS", 600),
  jobTimeoutSeconds: positiveInt("VERBATIM_JOB_TIMEOUT_SECONDS", 6 * 3600),
  uploadOrphanSeconds: positiveInt("VERBATIM_UPLOAD_ORPHAN_SECONDS", 3600),
  paymentProvider: Config.Literals(["builtin", "paddle"], "VERBATIM_PAYMENT_PROVIDER").pipe(
    Config.withDefault("builtin" as const)
  ),
  paddleWebhookSecret: Config.option(Config.Redacted("VERBATIM_PADDLE_WEBHOOK_SECRET")),
  metrics: Config.Boolean("VERBATIM_METRICS").pipe(Config.withDefault(true)),
  metricsPort: Config.option(
    Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 })), "VERBATIM_METRICS_PORT")
  ),
  shutdownGraceSeconds: positiveInt("VERBATIM_SHUTDOWN_GRACE_SECONDS", 20),
  meiliUrl: Config.option(Config.URL("MEILI_URL").pipe(Config.map((url) => url.href.replace(/\/$/, "")))),
  meiliApiKey: Config.option(Config.Redacted("MEILI_API_KEY"))
})

export class UnknownConfigVariable extends Schema.TaggedError<UnknownConfigVariable>()("UnknownConfigVariable", {
  names: Schema.Array(Schema.String)
}) {
  override get message() {
    return `Unknown configuration variable${this.names.length > 1 ? "s" : ""} ${this.names.join(", ")}: ` +
      `see the README's configuration table for the settings Verbatim reads.`
  }
}

/** Walks the provider's `VERBATIM` subtree (the env provider splits names on `_`). */
const verbatimVariables = Effect.gen(function*() {
  const provider = yield* ConfigProvider.ConfigProvider
  const found: Array<string> = []
  const walk = (path: ReadonlyArray<string>): Effect.Effect<void, ConfigProvider.SourceError> =>
    Effect.flatMap(provider.load(path), (node) => {
      if (node === undefined) return Effect.void
      if (node._tag === "Value") {
        found.push(path.join("_"))
        return Effect.void
      }
      if (node.value !== undefined) found.push(path.join("_"))
      if (node._tag === "Record") return Effect.forEach(node.keys, (key) => walk([...path, key]), { discard: true })
      return Effect.void
    })
  yield* walk(["VERBATIM"])
  return found
})

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("verbatim/config/AppConfig") {
  /** Reads and validates the environment; fails naming the offending variable. */
  static readonly layer = Layer.effect(
    AppConfig,
    Effect.gen(function*() {
      const names = yield* verbatimVariables.pipe(Effect.orElseSucceed(() => []))
      const unknown = names.filter((name) => !knownVariables.includes(name) && !clientVariables.includes(name))
      if (unknown.length > 0) return yield* new UnknownConfigVariable({ names: unknown })
      return AppConfig.of(yield* config)
    })
  )

  /** A fixed configuration for tests and embedding; unspecified fields take the defaults. */
  static readonly layerWith = (overrides: Partial<AppConfigShape>) =>
    Layer.effect(
      AppConfig,
      Effect.gen(function*() {
        const defaults = yield* config
        return AppConfig.of({ ...defaults, ...overrides })
      }).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({})))
    )
}
