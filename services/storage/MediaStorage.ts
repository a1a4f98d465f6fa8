/**
 * Where submitted media lives, addressed by object key. The default is a local directory
 * (`VERBATIM_MEDIA_DIR`, else `<dataDir>/media`), which every process on one Postgres must
 * share (SharedMedia checks it at start); an object store can replace this layer without touching callers,
 * as long as `localPath` can hand the pipeline a readable file (a store would download
 * to a temp file there).
 *
 * Writes go to a temporary beside the object (`<name>.<8 hex>.partial`) and are renamed
 * into place once complete, so an object under its key is always whole: a process killed
 * mid-upload leaves only a temporary, which `sweepTemporaries` removes once it is older than
 * a bound (an upload in progress touches its temporary with every chunk).
 */
import { Clock, Context, Effect, Layer, Option, Schema, Stream } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { StorageConfig } from "../config/StorageConfig.ts"

export class ObjectTooLarge extends Schema.TaggedError<ObjectTooLarge>()("ObjectTooLarge", {
  limit: Schema.Number
}) {}

export class ObjectMissing extends Schema.TaggedError<ObjectMissing>()("ObjectMissing", {
  key: Schema.String
}) {}

/** `writeOnce` received fewer bytes than it was told to expect. */
export class ObjectSizeMismatch extends Schema.TaggedError<ObjectSizeMismatch>()("ObjectSizeMismatch", {
  expected: Schema.Number,
  received: Schema.Number
}) {}

/** `writeOnce` found its key already written: an object written once is never replaced. */
export class ObjectExists extends Schema.TaggedError<ObjectExists>()("ObjectExists", {
  key: Schema.String
}) {}

/** A top-level `<area>/<owner id>` folder (`jobs/<id>`, `uploads/<id>`, `clips/<id>`). */
export interface OwnerFolder {
  readonly folder: string
  readonly ownerId: string
}

/** The media directory: `VERBATIM_MEDIA_DIR`, else `<VERBATIM_DATA_DIR>/media`, absolute. */
export const mediaRoot = (config: Pick<StorageConfig["Service"], "dataDir" | "mediaDir">): string =>
  path.resolve(Option.getOrElse(config.mediaDir, () => path.join(config.dataDir, "media")))

const safeKey = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,400}$/
const temporaryName = /\.[0-9a-f]{8}\.partial$/

/** Bytes a write may hold in memory while the disk catches up (the body is not read meanwhile). */
const writeBufferBytes = 1024 * 1024

export class MediaStorage extends Context.Service<MediaStorage, {
  /**
   * Streams `body` into `key`, never holding it whole in memory, replacing what was there.
   * Past `maxBytes` the write stops at once (the rest of the body is not read). The key
   * holds either the previous object or the whole new one, never a part.
   */
  write<E>(key: string, body: Stream.Stream<Uint8Array, E>, maxBytes: number): Effect.Effect<{ readonly bytes: number }, E | ObjectTooLarge>
  /**
   * Like `write`, but the object appears only if exactly `exactBytes` arrived
   * (more: ObjectTooLarge, fewer: ObjectSizeMismatch) and `key` did not exist (ObjectExists):
   * concurrent or repeated writers of one key cannot replace or remove a finished object.
   */
  writeOnce<E>(
    key: string,
    body: Stream.Stream<Uint8Array, E>,
    exactBytes: number
  ): Effect.Effect<{ readonly bytes: number }, E | ObjectTooLarge | ObjectSizeMismatch | ObjectExists>
  localPath(key: string): Effect.Effect<string, ObjectMissing>
  /** A local path where a writer outside this service (a download) may create `key`. */
  prepare(key: string): Effect.Effect<string>
  size(key: string): Effect.Effect<number, ObjectMissing>
  remove(key: string): Effect.Effect<void>
  /** Removes write temporaries not touched for `olderThanMs`; returns how many. */
  sweepTemporaries(olderThanMs: number): Effect.Effect<number>
  /** Owner folders whose every file is older than `olderThanMs` (candidates for an orphan check). */
  idleOwnerFolders(olderThanMs: number): Effect.Effect<ReadonlyArray<OwnerFolder>>
  /** Removes a whole owner folder (as listed by `idleOwnerFolders`). */
  removeOwnerFolder(folder: OwnerFolder): Effect.Effect<void>
}>()("verbatim/storage/MediaStorage") {
  static readonly layerDirectory = (root: string) =>
    Layer.sync(MediaStorage, () => {
      const resolve = (key: string) => {
        if (!safeKey.test(key) || key.includes("..")) throw new Error(`unsafe object key: ${key}`)
        return path.join(root, key)
      }

      /**
       * Streams `body` into a fresh temporary beside `key`'s file and runs `publish(temporary,
       * file, bytes)` once the file is closed. The temporary is gone afterwards whatever happens
       * (failure, interruption, or a publish that linked or renamed it).
       */
      const stage = <E, E2>(
        key: string,
        body: Stream.Stream<Uint8Array, E>,
        maxBytes: number,
        publish: (temporary: string, file: string, bytes: number) => Effect.Effect<void, E2>
      ) =>
        Effect.gen(function*() {
          const file = resolve(key)
          const temporary = `${file}.${randomBytes(4).toString("hex")}.partial`
          const cleanup = Effect.sync(() => fs.rmSync(temporary, { force: true }))
          return yield* Effect.gen(function*() {
            const bytes = yield* Effect.scoped(Effect.gen(function*() {
              let failure: Error | undefined
              const out = yield* Effect.acquireRelease(
                Effect.sync(() => {
                  // Created at once (not on the stream's deferred open): a sweep never sees the folder empty.
                  fs.mkdirSync(path.dirname(file), { recursive: true })
                  const stream = fs.createWriteStream(temporary, {
                    fd: fs.openSync(temporary, "w"),
                    highWaterMark: writeBufferBytes
                  })
                  stream.on("error", (error) => (failure = error))
                  return stream
                }),
                (stream) =>
                  Effect.callback<void>((resume) => {
                    stream.end(() => resume(Effect.void))
                  })
              )
              let bytes = 0
              // A batch at a time: its chunks go out as one writev once the file is free, and
              // the body is read on only while less than `writeBufferBytes` waits for the disk.
              yield* Stream.runForEachArray(body, (chunks) => {
                for (const chunk of chunks) bytes += chunk.byteLength
                if (bytes > maxBytes) return Effect.fail(new ObjectTooLarge({ limit: maxBytes }))
                if (failure !== undefined) return Effect.die(failure)
                let ready = true
                out.cork()
                for (const chunk of chunks) ready = out.write(chunk)
                out.uncork()
                if (ready) return Effect.void
                return Effect.callback<void>((resume) => {
                  // Whichever comes first; both listeners go, so a long upload does not pile them up.
                  const settle = () => {
                    out.off("drain", settle)
                    out.off("error", settle)
                    resume(failure === undefined ? Effect.void : Effect.die(failure))
                  }
                  out.on("drain", settle)
                  out.on("error", settle)
                })
              })
              return bytes
            }))
            yield* publish(temporary, file, bytes)
            return { bytes }
          }).pipe(Effect.ensuring(cleanup))
        })

      const write = <E>(key: string, body: Stream.Stream<Uint8Array, E>, maxBytes: number) =>
        stage(key, body, maxBytes, (temporary, file) => Effect.sync(() => fs.renameSync(temporary, file))).pipe(
          Effect.withSpan("MediaStorage.write")
        )

      const writeOnce = <E>(key: string, body: Stream.Stream<Uint8Array, E>, exactBytes: number) =>
        stage(key, body, exactBytes, (temporary, file, bytes): Effect.Effect<void, ObjectSizeMismatch | ObjectExists> => {
          if (bytes !== exactBytes) return Effect.fail(new ObjectSizeMismatch({ expected: exactBytes, received: bytes }))
          // link() never replaces: of two writers, the second finds the first's object.
          return Effect.suspend(() => {
            try {
              fs.linkSync(temporary, file)
              return Effect.void
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === "EEXIST") return Effect.fail(new ObjectExists({ key }))
              return Effect.die(error)
            }
          })
        }).pipe(Effect.withSpan("MediaStorage.writeOnce"))

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

      const removeEmptyFolder = (folder: string) => {
        if (fs.existsSync(folder) && fs.readdirSync(folder).length === 0) fs.rmdirSync(folder)
      }

      const remove = Effect.fn("MediaStorage.remove")(function*(key: string) {
        yield* Effect.sync(() => {
          const file = resolve(key)
          fs.rmSync(file, { force: true })
          // Drop the job's folder once empty; keys are `jobs/<id>/<name>`.
          removeEmptyFolder(path.dirname(file))
        })
      })

      /** Files below `folder` with their modification times; a file gone meanwhile is skipped. */
      const filesBelow = (folder: string): Array<{ readonly file: string; readonly mtimeMs: number }> =>
        fs.readdirSync(folder, { recursive: true, encoding: "utf8" }).flatMap((name) => {
          const file = path.join(folder, name)
          const stat = fs.statSync(file, { throwIfNoEntry: false })
          return stat?.isFile() ? [{ file, mtimeMs: stat.mtimeMs }] : []
        })

      const ownerFolders = (): Array<OwnerFolder & { readonly absolute: string }> =>
        (fs.existsSync(root) ? fs.readdirSync(root, { withFileTypes: true }) : [])
          .filter((area) => area.isDirectory())
          .flatMap((area) =>
            fs.readdirSync(path.join(root, area.name), { withFileTypes: true })
              .filter((owner) => owner.isDirectory())
              .map((owner) => ({
                folder: `${area.name}/${owner.name}`,
                ownerId: owner.name,
                absolute: path.join(root, area.name, owner.name)
              }))
          )

      /** Whether nothing was added to or removed from `folder` itself since `before`. */
      const folderIdle = (folder: string, before: number) =>
        (fs.statSync(folder, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) <= before

      const sweepTemporaries = Effect.fn("MediaStorage.sweepTemporaries")(function*(olderThanMs: number) {
        const before = (yield* Clock.currentTimeMillis) - olderThanMs
        return yield* Effect.sync(() => {
          let removed = 0
          for (const owner of ownerFolders()) {
            // Judged before this sweep touches it; a fresh folder an upload is about to fill stays.
            const idle = folderIdle(owner.absolute, before)
            for (const { file, mtimeMs } of filesBelow(owner.absolute)) {
              if (!temporaryName.test(file) || mtimeMs > before) continue
              fs.rmSync(file, { force: true })
              removed++
            }
            if (idle) removeEmptyFolder(owner.absolute)
          }
          return removed
        })
      })

      const idleOwnerFolders = Effect.fn("MediaStorage.idleOwnerFolders")(function*(olderThanMs: number) {
        const before = (yield* Clock.currentTimeMillis) - olderThanMs
        return yield* Effect.sync(() =>
          ownerFolders()
            // A fresh folder, still empty, is not idle.
            .filter((owner) => folderIdle(owner.absolute, before))
            .filter((owner) => filesBelow(owner.absolute).every((entry) => entry.mtimeMs <= before))
            .map(({ folder, ownerId }) => ({ folder, ownerId }))
        )
      })

      const removeOwnerFolder = Effect.fn("MediaStorage.removeOwnerFolder")(function*(owner: OwnerFolder) {
        yield* Effect.sync(() => fs.rmSync(resolve(owner.folder), { recursive: true, force: true }))
      })

      return MediaStorage.of({
        write,
        writeOnce,
        localPath,
        prepare,
        size,
        remove,
        sweepTemporaries,
        idleOwnerFolders,
        removeOwnerFolder
      })
    })

  static readonly layer = Layer.unwrap(StorageConfig.useSync((config) => MediaStorage.layerDirectory(mediaRoot(config))))
}
