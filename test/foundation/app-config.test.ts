/**
 * Configuration per area (services/config/): the strict check (an unknown `VERBATIM_*` variable
 * stops the process naming it, but the client's `VERBATIM_KEY` from the README's quick start does
 * not), each area's defaults, a bad value naming its variable, and the README's configuration
 * table being the one generated from the declarations.
 */
import { assert, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Exit, Layer, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { BillingConfig } from "../../services/config/BillingConfig.ts"
import * as Configuration from "../../services/config/Configuration.ts"
import { DatabaseConfig } from "../../services/config/DatabaseConfig.ts"
import { InsightsConfig } from "../../services/config/InsightsConfig.ts"
import { JobsConfig } from "../../services/config/JobsConfig.ts"
import { LimitsConfig } from "../../services/config/LimitsConfig.ts"
import { SearchConfig } from "../../services/config/SearchConfig.ts"
import { SecurityConfig } from "../../services/config/SecurityConfig.ts"
import { ServerConfig } from "../../services/config/ServerConfig.ts"
import { SpeechConfig } from "../../services/config/SpeechConfig.ts"
import { StorageConfig } from "../../services/config/StorageConfig.ts"

const load = (env: Record<string, string>) =>
  Effect.exit(Layer.build(Configuration.layer).pipe(
    Effect.scoped,
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
  ))

const failure = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? String(exit.cause) : "")

it.effect("refuses an unknown VERBATIM_* variable, naming it", () =>
  Effect.gen(function*() {
    const exit = yield* load({ VERBATIM_PROT: "8080" })
    assert.isTrue(Exit.isFailure(exit))
    assert.include(failure(exit), "Unknown configuration variable VERBATIM_PROT: see the README's configuration table")
  }))

it.effect("names every unknown variable, and refuses before reading the known ones", () =>
  Effect.gen(function*() {
    const exit = yield* load({ VERBATIM_PROT: "8080", VERBATIM_MODLE: "x", VERBATIM_PORT: "not a port" })
    assert.include(failure(exit), "Unknown configuration variables")
    assert.include(failure(exit), "VERBATIM_PROT")
    assert.include(failure(exit), "VERBATIM_MODLE")
  }))

it.effect("accepts the client's VERBATIM_KEY from the README's quick start", () =>
  Effect.gen(function*() {
    const exit = yield* load({ VERBATIM_KEY: "vb_example", VERBATIM_PORT: "9090" })
    assert.isTrue(Exit.isSuccess(exit), failure(exit))
  }))

it("knows exactly the variables Verbatim has always read, from the area declarations", () => {
  // The names before the split into areas: renaming or dropping one would break deployments.
  const before = [
    "VERBATIM_HOST", "VERBATIM_PORT", "VERBATIM_DATA_DIR", "VERBATIM_MEDIA_DIR", "VERBATIM_PUBLIC_URL",
    "VERBATIM_SIGNING_SECRET", "VERBATIM_SECRET_KEY", "VERBATIM_RATE_LIMIT_PER_MINUTE",
    "VERBATIM_ENTERPRISE_RATE_LIMIT_PER_MINUTE", "VERBATIM_BATCH_STATUS_PER_MINUTE", "VERBATIM_SAMPLES_PER_DAY",
    "VERBATIM_TRUST_PROXY", "VERBATIM_LOG_LEVEL", "VERBATIM_WORKERS", "VERBATIM_RUNNER_HOST", "VERBATIM_RUNNER_PORT",
    "VERBATIM_FETCH_ALLOW", "VERBATIM_DECODER", "VERBATIM_MODELS_DIR", "VERBATIM_MODELS_URL", "VERBATIM_MODEL",
    "VERBATIM_THREADS", "VERBATIM_BEAM_SIZE", "VERBATIM_BATCH_SIZE", "VERBATIM_CONDITION_ON_PREVIOUS_TEXT",
    "VERBATIM_ENCODER", "VERBATIM_LLM_URL", "VERBATIM_LLM_MODEL", "VERBATIM_LLM_KEY", "VERBATIM_LLM_TIMEOUT_SECONDS",
    "VERBATIM_INSIGHTS_WAIT_SECONDS", "VERBATIM_JOB_STALL_SECONDS", "VERBATIM_JOB_TIMEOUT_SECONDS",
    "VERBATIM_UPLOAD_ORPHAN_SECONDS", "VERBATIM_PAYMENT_PROVIDER", "VERBATIM_PADDLE_WEBHOOK_SECRET",
    "VERBATIM_METRICS", "VERBATIM_METRICS_PORT", "VERBATIM_SHUTDOWN_GRACE_SECONDS",
    "DATABASE_URL", "MEILI_URL", "MEILI_API_KEY", "VERBATIM_APERTIUM_DIR"
  ]
  assert.sameMembers([...Configuration.knownVariables], before)
  assert.strictEqual(new Set(Configuration.knownVariables).size, Configuration.knownVariables.length)
})

it("declares each field name in one area only (tests route flat overrides by name)", () => {
  const names = Configuration.areas.flatMap((area) => Object.keys(area.fields))
  assert.strictEqual(new Set(names).size, names.length)
})

it.effect("each area's defaults, with nothing set", () =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(Effect.scoped(Effect.map(Layer.build(Configuration.layer), (context) => context)).pipe(
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
    ))
    assert.isTrue(Exit.isSuccess(exit), failure(exit))
    if (!Exit.isSuccess(exit)) return
    const get = <I, S>(key: Context.Key<I, S>) => Context.get(exit.value as Context.Context<I>, key)
    assert.deepStrictEqual(get(ServerConfig), {
      host: "127.0.0.1",
      port: 8080,
      publicUrl: Option.none(),
      trustProxy: false,
      logLevel: "info",
      metrics: true,
      metricsPort: Option.none(),
      shutdownGraceSeconds: 20
    })
    assert.deepStrictEqual(get(DatabaseConfig), { databaseUrl: Option.none(), runnerHost: "127.0.0.1", runnerPort: 34431 })
    assert.deepStrictEqual(get(StorageConfig), { dataDir: "./data", mediaDir: Option.none(), uploadOrphanSeconds: 3600 })
    assert.deepStrictEqual(get(SecurityConfig), { signingSecret: Option.none(), secretKey: Option.none(), fetchAllow: [] })
    assert.deepStrictEqual(get(LimitsConfig), {
      rateLimitPerMinute: 60,
      enterpriseRateLimitPerMinute: 120,
      batchStatusPerMinute: 600,
      samplesPerDay: 3
    })
    assert.deepStrictEqual(get(SpeechConfig), {
      model: "whisper-base",
      modelsDir: "../shared/models",
      modelsUrl: "https://huggingface.co",
      workers: 1,
      threads: 2,
      encoder: "auto",
      batchSize: 4,
      beamSize: 1,
      conditionOnPreviousText: false,
      decoder: "auto"
    })
    assert.deepStrictEqual(get(JobsConfig), { jobStallSeconds: 600, jobTimeoutSeconds: 21600 })
    assert.deepStrictEqual(get(InsightsConfig), {
      llmUrl: Option.none(),
      llmModel: "llama3.1",
      llmKey: Option.none(),
      llmTimeoutSeconds: 120,
      insightsWaitSeconds: 60
    })
    assert.deepStrictEqual(get(SearchConfig), { meiliUrl: Option.none(), meiliApiKey: Option.none(), apertiumDir: "/usr/share/apertium" })
    assert.deepStrictEqual(get(BillingConfig), { paymentProvider: "builtin", paddleWebhookSecret: Option.none() })
  }))

it.effect("reads set values: URLs without a trailing slash, lists split on commas, secrets redacted", () =>
  Effect.gen(function*() {
    const context = yield* Layer.build(Configuration.layer).pipe(
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({
        env: {
          VERBATIM_PUBLIC_URL: "https://verbatim.example/",
          VERBATIM_FETCH_ALLOW: "10.0.0.0/8, ,nas.local:8080",
          VERBATIM_SECRET_KEY: "k3y",
          DATABASE_URL: "postgres://u:p@db/v",
          VERBATIM_PORT: "0"
        }
      }))
    )
    assert.deepStrictEqual(Context.get(context, ServerConfig).publicUrl, Option.some("https://verbatim.example"))
    assert.strictEqual(Context.get(context, ServerConfig).port, 0)
    assert.deepStrictEqual(Context.get(context, SecurityConfig).fetchAllow, ["10.0.0.0/8", "nas.local:8080"])
    const secret = Context.get(context, SecurityConfig).secretKey
    assert.isTrue(Option.isSome(secret) && Redacted.isRedacted(secret.value) && Redacted.value(secret.value) === "k3y")
    assert.notInclude(String(secret), "k3y")
    const url = Context.get(context, DatabaseConfig).databaseUrl
    assert.isTrue(Option.isSome(url) && Redacted.isRedacted(url.value))
  }).pipe(Effect.scoped))

it.effect("a bad value stops the start naming its variable", () =>
  Effect.gen(function*() {
    for (
      const [name, value] of [
        ["VERBATIM_PORT", "99999"],
        ["VERBATIM_WORKERS", "0"],
        ["VERBATIM_BATCH_SIZE", "17"],
        ["VERBATIM_MODEL", "whisper-large"],
        ["VERBATIM_PUBLIC_URL", "not a url"],
        ["VERBATIM_TRUST_PROXY", "perhaps"],
        ["VERBATIM_PAYMENT_PROVIDER", "stripe"],
        ["VERBATIM_JOB_STALL_SECONDS", "-1"],
        ["MEILI_URL", "nope"]
      ] as const
    ) {
      const exit = yield* load({ [name]: value })
      assert.isTrue(Exit.isFailure(exit), `${name}=${value} was accepted`)
      assert.include(failure(exit), name, `${name}=${value}`)
    }
  }))

it("the README's configuration table is the one generated from the declarations (npm run config:table)", () => {
  const readme = fs.readFileSync(path.join(import.meta.dirname, "../../README.md"), "utf8")
  const section = readme.slice(readme.indexOf("\n## Configuration\n"))
  const start = section.indexOf("| variable | default | meaning |")
  const end = section.indexOf("\n\n", start)
  assert.isAtLeast(start, 0, "the README's configuration section has no table")
  assert.strictEqual(section.slice(start, end === -1 ? undefined : end), Configuration.configurationTable())
})
