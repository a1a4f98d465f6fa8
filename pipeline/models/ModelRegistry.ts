import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Context, Effect, Layer, Schema, Semaphore } from "effect"

/**
 * Model files on disk, by model name.
 *
 * `resolve(name)` returns absolute paths when every required file is present (size
 * checked; hashing 100 MB on every job would cost more than the job). Missing files are
 * downloaded on first use from `<baseUrl>/<repo>/resolve/main/<file>` (Hugging Face
 * layout) into the models directory, verified against the sha256 below and only then
 * renamed into place, so a partial download never looks like a model.
 */

export interface ModelFile {
  readonly file: string
  readonly bytes: number
  readonly sha256: string
}

export interface ModelSpec {
  readonly name: string
  /** Folder under the models directory. */
  readonly folder: string
  /** Repository id under the download base URL. */
  readonly repo: string
  readonly files: ReadonlyArray<ModelFile>
}

// Sizes and hashes from shared/models/README.md (the files this project ships and tests).
export const whisperModels: ReadonlyArray<ModelSpec> = [
  {
    name: "whisper-tiny.en",
    folder: "whisper-tiny.en",
    repo: "verbatim/whisper-tiny.en",
    files: [
      { file: "config.json", bytes: 2310, sha256: "575c5a55f6271004717116532405fe3b778eb7894d2b218f1738f68c0cd22e8f" },
      { file: "generation_config.json", bytes: 1579, sha256: "74e35bb6922a0c1beeda6b1abd981bb56584f9bd060eefbeb92a39b0f14e9dad" },
      { file: "onnx/decoder_model_merged_quantized.onnx", bytes: 30023200, sha256: "3a1fb1a99dcebb20473b419a4f85685ead6068b8f430852dc2043f8e9a59091d" },
      { file: "onnx/encoder_model.onnx", bytes: 16491030, sha256: "94033d1484d3c73fe4d925e2f2d9810c79703ab7c9dc5ef516a491bbddcad31d" },
      { file: "onnx/encoder_model_quantized.onnx", bytes: 8922152, sha256: "d8c1319153b6a025d1dcbe278c6d57cc260ac097c388d7df70cbde3e1c6f20c1" },
      { file: "preprocessor_config.json", bytes: 355, sha256: "1191f0f1496d214208ea9da3aaf66d4421a3cd6b7a91fe032c2fcf942f2944c5" },
      { file: "tokenizer.json", bytes: 1719641, sha256: "51e0263e2342cde1b96aa9fe47b4829799ce63e1055e1ba27c910edcacbd0fe7" }
    ]
  },
  {
    name: "whisper-base",
    folder: "whisper-base",
    repo: "verbatim/whisper-base",
    files: [
      { file: "config.json", bytes: 2321, sha256: "81c43f07e86473a7608a3e956fa526b1a52bcdee1bb8626b54cf18fe9a3ed736" },
      { file: "generation_config.json", bytes: 3765, sha256: "b171fadd62e3620385d14c99a9acadfbd1bbeaf4538eb5472c7ad2f1d38f88fc" },
      { file: "onnx/decoder_model_merged_quantized.onnx", bytes: 52727247, sha256: "9be245c34acfcc9bed209675acf361967cae223b7aebc8aac7e45ebbec198e72" },
      { file: "onnx/encoder_model.onnx", bytes: 41303230, sha256: "d3392936644e8668cb61a7e0bc9d1d9bde451a5b30d87df6e04d173945063222" },
      { file: "onnx/encoder_model_quantized.onnx", bytes: 21583438, sha256: "a86e3c0b865ab2f6c1b59bee580b909a12991173c10b79635943027b1ab94726" },
      { file: "preprocessor_config.json", bytes: 355, sha256: "1191f0f1496d214208ea9da3aaf66d4421a3cd6b7a91fe032c2fcf942f2944c5" },
      { file: "tokenizer.json", bytes: 1794422, sha256: "4f1c7a2a1182a8efed3971392a295cd5b9d0a7c0c31f7c80cafd639bfc56ce9e" }
    ]
  }
]

export class UnknownModelError extends Schema.TaggedError<UnknownModelError>()("UnknownModelError", {
  model: Schema.String,
  known: Schema.Array(Schema.String)
}) {}

export class ModelDownloadError extends Schema.TaggedError<ModelDownloadError>()("ModelDownloadError", {
  model: Schema.String,
  file: Schema.String,
  url: Schema.String,
  message: Schema.String
}) {}

export class ModelChecksumError extends Schema.TaggedError<ModelChecksumError>()("ModelChecksumError", {
  model: Schema.String,
  file: Schema.String,
  expected: Schema.String,
  actual: Schema.String
}) {}

export type ModelResolveError = UnknownModelError | ModelDownloadError | ModelChecksumError

export interface ResolvedModel {
  readonly name: string
  readonly dir: string
  /** Absolute path of a file listed in the spec, e.g. `file("onnx/encoder_model.onnx")`. */
  readonly file: (relative: string) => string
}

export interface DownloadProgress {
  readonly model: string
  readonly file: string
  readonly receivedBytes: number
  readonly totalBytes: number
}

export interface ModelRegistryOptions {
  readonly modelsDir: string
  /** e.g. "https://huggingface.co"; files come from `<baseUrl>/<repo>/resolve/main/<file>`. */
  readonly baseUrl: string
  readonly models?: ReadonlyArray<ModelSpec>
  readonly onProgress?: (progress: DownloadProgress) => void
}

const present = (file: string, bytes: number): boolean => {
  const stat = fs.statSync(file, { throwIfNoEntry: false })
  return stat !== undefined && stat.isFile() && stat.size === bytes
}

const errorMessage = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause
    return inner instanceof Error ? `${cause.message}: ${inner.message}` : cause.message
  }
  return String(cause)
}

export class ModelRegistry extends Context.Service<ModelRegistry, {
  readonly specs: ReadonlyArray<ModelSpec>
  /** Paths of the model's files, downloading missing ones first. */
  readonly resolve: (name: string) => Effect.Effect<ResolvedModel, ModelResolveError>
}>()("verbatim/pipeline/ModelRegistry") {
  static readonly layer = (options: ModelRegistryOptions) =>
    Layer.effect(
      ModelRegistry,
      Effect.gen(function*() {
        const specs = options.models ?? whisperModels
        // One download at a time: two jobs asking for the same missing model must not race.
        const lock = yield* Semaphore.make(1)

        const download = Effect.fnUntraced(function*(spec: ModelSpec, f: ModelFile, target: string) {
          const url = `${options.baseUrl.replace(/\/+$/, "")}/${spec.repo}/resolve/main/${f.file}`
          const fail = (message: string) =>
            new ModelDownloadError({ model: spec.name, file: f.file, url, message: `downloading ${spec.name}/${f.file} from ${url} failed: ${message}` })
          yield* Effect.logInfo(`downloading ${spec.name}/${f.file} from ${url}`)
          const partial = `${target}.partial`
          const sha = yield* Effect.tryPromise({
            try: async () => {
              await fsp.mkdir(path.dirname(target), { recursive: true })
              const response = await fetch(url, { redirect: "follow" })
              if (!response.ok || response.body === null) throw new Error(`HTTP ${response.status}`)
              const hash = crypto.createHash("sha256")
              const out = fs.createWriteStream(partial)
              let received = 0
              let reported = 0
              try {
                for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
                  hash.update(chunk)
                  received += chunk.length
                  if (!out.write(chunk)) await new Promise<void>((resolve) => out.once("drain", () => resolve()))
                  if (received - reported >= f.bytes / 20 || received === f.bytes) {
                    reported = received
                    options.onProgress?.({ model: spec.name, file: f.file, receivedBytes: received, totalBytes: f.bytes })
                  }
                }
              } finally {
                await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())))
              }
              return hash.digest("hex")
            },
            catch: (cause) => fail(errorMessage(cause))
          }).pipe(Effect.tapError(() => Effect.promise(() => fsp.rm(partial, { force: true }))))
          if (sha !== f.sha256) {
            yield* Effect.promise(() => fsp.rm(partial, { force: true }))
            return yield* new ModelChecksumError({ model: spec.name, file: f.file, expected: f.sha256, actual: sha })
          }
          yield* Effect.tryPromise({ try: () => fsp.rename(partial, target), catch: (cause) => fail(errorMessage(cause)) })
        })

        const resolve = Effect.fn("ModelRegistry.resolve")(function*(name: string) {
          const spec = specs.find((s) => s.name === name)
          if (spec === undefined) return yield* new UnknownModelError({ model: name, known: specs.map((s) => s.name) })
          const dir = path.resolve(options.modelsDir, spec.folder)
          const missing = () => spec.files.filter((f) => !present(path.join(dir, f.file), f.bytes))
          if (missing().length > 0) {
            // What is missing is decided under the lock: a caller that waited for another's download
            // finds the files there instead of fetching them again.
            yield* lock.withPermits(1)(
              Effect.suspend(() => Effect.forEach(missing(), (f) => download(spec, f, path.join(dir, f.file)), { discard: true }))
            )
          }
          const known = new Set(spec.files.map((f) => f.file))
          return {
            name,
            dir,
            file: (relative: string) => {
              if (!known.has(relative)) throw new Error(`${relative} is not a file of model ${name}`)
              return path.join(dir, relative)
            }
          } satisfies ResolvedModel
        })

        return ModelRegistry.of({ specs, resolve })
      })
    )
}
