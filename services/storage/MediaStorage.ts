/**
 * Where submitted media lives, addressed by object key. The default is a local directory
 * (`<dataDir>/media`); an object store can replace this layer without touching callers,
 * as long as `localPath` can hand the pipeline a readable file (a store would download
 * to a temp file there).
 */
import { Context, Effect, Layer, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { AppConfig } from "../AppConfig.ts"

export class ObjectTooLarge extends Schema.TaggedError<ObjectTooLarge>()("ObjectTooLarge", {
  limit: Schema.Number
}) {}

export class ObjectMissing extends Schema.TaggedError<ObjectMissing>()("ObjectMissing", {
  key: Schema.String
}) {}

const safeKey = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,400}$/

export class MediaStorage extends Context.Service<MediaStorage, {
  /**
   * Streams `body` into `key`, never holding it whole in memory. Past `maxBytes` the
   * write stops at once (the rest of the body is not read) and the partial object is
   * removed.
   */
  write<E>(key: string, body: Stream.Stream<Uint8Array, E>, maxBytes: number): Effect.Effect<{ readonly bytes: number }, E | ObjectTooLarge>
  localPath(key: string): Effect.Effect<string, ObjectMissing>
  /** A local path where a writer outside this service (a download) may create `key`. */
  prepare(key: string): Effect.Effect<string>
  size(key: string): Effect.Effect<number, ObjectMissing>
  remove(key: string): Effect.Effect<void>
}>()("verbatim/storage/MediaStorage") {
  static readonly layerDirectory = (root: string) =>
    Layer.sync(MediaStorage, () => {
      const resolve = (key: string) => {
        if (!safeKey.test(key) || key.includes("..")) throw new Error(`unsafe object key: ${key}`)
        return path.join(root, key)
      }

      const write = <E>(key: string, body: Stream.Stream<Uint8Array, E>, maxBytes: number) =>
        Effect.gen(function*() {
          const file = resolve(key)
          yield* Effect.sync(() => fs.mkdirSync(path.dirname(file), { recursive: true }))
          const out = yield* Effect.acquireRelease(
            Effect.sync(() => fs.createWriteStream(file)),
            (stream) =>
              Effect.callback<void>((resume) => {
                stream.end(() => resume(Effect.void))
              })
          )
          let bytes = 0
          yield* Stream.runForEach(body, (chunk) => {
            bytes += chunk.byteLength
            if (bytes > maxBytes) return Effect.fail(new ObjectTooLarge({ limit: maxBytes }))
            return Effect.callback<void>((resume) => {
              if (out.write(chunk)) resume(Effect.void)
              else out.once("drain", () => resume(Effect.void))
            })
          })
          return { bytes }
        }).pipe(
          Effect.scoped,
          Effect.tapError(() => Effect.sync(() => fs.rmSync(resolve(key), { force: true }))),
          Effect.onInterrupt(() => Effect.sync(() => fs.rmSync(resolve(key), { force: true }))),
          Effect.withSpan("MediaStorage.write")
        )

      const localPath = Effect.fn("MediaStorage.localPath")(function*(key: string) {
        const file = resolve(key)
        if (!fs.existsSync(file)) return yield* new ObjectMissing({ key })
        return file
      })

      const prepare = Effect.fn("MediaStorage.prepare")(function*(key: string) {
        return yield* Effect.sync(() => {
          const file = resolve(key)
          fs.mkdirSync(path.dirname(file), { recursive: true })
          return file
        })
      })

      const size = Effect.fn("MediaStorage.size")(function*(key: string) {
        const file = yield* localPath(key)
        return fs.statSync(file).size
      })

      const remove = Effect.fn("MediaStorage.remove")(function*(key: string) {
        yield* Effect.sync(() => {
          const file = resolve(key)
          fs.rmSync(file, { force: true })
          // Drop the job's folder once empty; keys are `jobs/<id>/<name>`.
          const folder = path.dirname(file)
          if (fs.existsSync(folder) && fs.readdirSync(folder).length === 0) fs.rmdirSync(folder)
        })
      })

      return MediaStorage.of({ write, localPath, prepare, size, remove })
    })

  static readonly layer = Layer.unwrap(
    AppConfig.useSync((config) => MediaStorage.layerDirectory(path.resolve(config.dataDir, "media")))
  )
}
