/**
 * MediaStorage on a real directory: objects appear whole or not at all, `writeOnce` never
 * replaces, failed and interrupted writes leave no temporary, and the sweeps respect their
 * idle bound (a fresh folder an upload is about to fill is never taken).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { MediaStorage } from "../../services/storage/MediaStorage.ts"

const withStorage = <A, E>(use: (storage: MediaStorage["Service"], root: string) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "media-storage-"))
    const storage = yield* Effect.provide(Effect.service(MediaStorage), MediaStorage.layerDirectory(root))
    return yield* use(storage, root).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(root, { recursive: true, force: true }))))
  })

const bytes = (text: string) => Stream.make(new TextEncoder().encode(text))
const filesBelow = (root: string) =>
  fs.readdirSync(root, { recursive: true, encoding: "utf8" }).filter((name) => fs.statSync(path.join(root, name)).isFile())

describe("MediaStorage", () => {
  it.effect("writeOnce: a short body or an existing object leaves nothing new; the first object stays intact", () =>
    withStorage((storage, root) =>
      Effect.gen(function*() {
        const key = "uploads/11111111-1111-4111-8111-111111111111/original.wav"
        const short = yield* Effect.flip(storage.writeOnce(key, bytes("abc"), 5))
        assert.strictEqual(short._tag, "ObjectSizeMismatch")
        const long = yield* Effect.flip(storage.writeOnce(key, bytes("abcdefg"), 5))
        assert.strictEqual(long._tag, "ObjectTooLarge")
        assert.deepStrictEqual(filesBelow(root), [])
        assert.strictEqual((yield* storage.writeOnce(key, bytes("first"), 5)).bytes, 5)
        const again = yield* Effect.flip(storage.writeOnce(key, bytes("other"), 5))
        assert.strictEqual(again._tag, "ObjectExists")
        assert.strictEqual(fs.readFileSync(path.join(root, key), "utf8"), "first")
        assert.deepStrictEqual(filesBelow(root), [key])
      })))

  it.live("write replaces whole, and an interrupted write leaves neither object nor temporary", () =>
    withStorage((storage, root) =>
      Effect.gen(function*() {
        const key = "jobs/22222222-2222-4222-8222-222222222222/original.wav"
        yield* storage.write(key, bytes("one"), 100)
        yield* storage.write(key, bytes("two!"), 100)
        assert.strictEqual(fs.readFileSync(path.join(root, key), "utf8"), "two!")
        const other = "jobs/33333333-3333-4333-8333-333333333333/original.wav"
        const endless = Stream.concat(bytes("partial"), Stream.never)
        const fiber = yield* Effect.forkChild(storage.write(other, endless, 100))
        yield* Effect.sleep("50 millis")
        assert.isTrue(filesBelow(root).some((name) => name.endsWith(".partial")))
        assert.isTrue(Exit.hasInterrupts(yield* Fiber.interrupt(fiber).pipe(Effect.andThen(Fiber.await(fiber)))))
        assert.deepStrictEqual(filesBelow(root), [key])
      })))

  it.live("streams a large body through many drains without piling up listeners", () =>
    withStorage((storage, root) =>
      Effect.gen(function*() {
        const warnings: Array<string> = []
        const onWarning = (warning: Error) => warnings.push(warning.name)
        process.on("warning", onWarning)
        const chunk = new Uint8Array(1024 * 1024).fill(7)
        const body = Stream.fromIterable(Array.from({ length: 48 }, () => chunk))
        const key = "jobs/66666666-6666-4666-8666-666666666666/original.wav"
        const written = yield* storage.write(key, body, 64 * 1024 * 1024).pipe(
          Effect.ensuring(Effect.sync(() => process.off("warning", onWarning)))
        )
        assert.strictEqual(written.bytes, 48 * 1024 * 1024)
        assert.strictEqual(fs.statSync(path.join(root, key)).size, 48 * 1024 * 1024)
        assert.notInclude(warnings, "MaxListenersExceededWarning")
      })))

  it.live("sweeps only what has been idle past the bound; a fresh empty folder is not idle", () =>
    withStorage((storage, root) =>
      Effect.gen(function*() {
        const stale = path.join(root, "jobs/44444444-4444-4444-8444-444444444444/original.wav.0123abcd.partial")
        fs.mkdirSync(path.dirname(stale), { recursive: true })
        fs.writeFileSync(stale, "x")
        fs.mkdirSync(path.join(root, "jobs/55555555-5555-4555-8555-555555555555"))
        assert.strictEqual(yield* storage.sweepTemporaries(60_000), 0)
        assert.deepStrictEqual(yield* storage.idleOwnerFolders(60_000), [])
        const past = new Date(Date.now() - 120_000)
        fs.utimesSync(stale, past, past)
        assert.strictEqual(yield* storage.sweepTemporaries(60_000), 1)
        assert.isFalse(fs.existsSync(stale))
        // Its folder was touched by this sweep's removal; the fresh one was never idle.
        assert.deepStrictEqual(yield* storage.idleOwnerFolders(60_000), [])
        for (const id of ["44444444-4444-4444-8444-444444444444", "55555555-5555-4555-8555-555555555555"]) {
          fs.utimesSync(path.join(root, "jobs", id), past, past)
        }
        const idle = yield* storage.idleOwnerFolders(60_000)
        assert.deepStrictEqual(idle.map((owner) => owner.folder).sort(), [
          "jobs/44444444-4444-4444-8444-444444444444",
          "jobs/55555555-5555-4555-8555-555555555555"
        ])
      })))
})
