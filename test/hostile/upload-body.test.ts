/**
 * How upload bodies are read (src/http/BodyStream.ts) and written (MediaStorage): chunks pass
 * through uncopied, reading pauses while a bounded amount waits for the consumer (so a slow
 * disk holds the socket back instead of growing the heap), a source that fails or closes early
 * fails the stream, and over real sockets a client that hangs up mid-PUT leaves nothing behind
 * while a large body arrives whole.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Option, Redacted, Stream } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { Readable } from "node:stream"
import { afterAll, beforeAll, expect } from "vitest"
import { MediaStorage } from "../../services/storage/MediaStorage.ts"
import { fromReadable } from "../../src/http/BodyStream.ts"
import { postJson } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn } from "../support/standInPipeline.ts"

const kib = 1024

/** A source of `count` chunks of `size` bytes, each produced on demand; counts what it produced. */
const source = (count: number, size: number) => {
  const chunks = Array.from({ length: count }, (_, i) => Buffer.alloc(size, i % 256))
  let produced = 0
  const readable = new Readable({
    read() {
      if (produced === count) return void this.push(null)
      this.push(chunks[produced++])
    }
  })
  return { readable, chunks, produced: () => produced }
}

const waitTurns = (turns: number) =>
  Effect.promise(async () => {
    for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve))
  })

describe("BodyStream.fromReadable", () => {
  it.effect("hands the source's chunks on as they are, in order, and ends with it", () =>
    Effect.gen(function*() {
      const { readable, chunks } = source(40, 16 * kib)
      const received = yield* Stream.runCollect(fromReadable(readable, String, { destroyOnDone: true }))
      assert.strictEqual(received.length, chunks.length)
      // The very same buffers: no concatenation, no copy.
      received.forEach((chunk, i) => assert.strictEqual(chunk, chunks[i]))
    }))

  it.live("reads a source that was paused before the stream started", () =>
    Effect.gen(function*() {
      const { readable, chunks } = source(8, 16 * kib)
      readable.pause()
      const received = yield* Stream.runCollect(fromReadable(readable, String, { destroyOnDone: false })).pipe(
        Effect.timeout("5 seconds")
      )
      assert.strictEqual(received.length, chunks.length)
    }))

  it.live("pauses the source while maxBufferedBytes wait, and resumes it when they are taken", () =>
    Effect.scoped(Effect.gen(function*() {
      const { readable, produced } = source(1000, 64 * kib)
      const pull = yield* Stream.toPull(fromReadable(readable, String, { destroyOnDone: true, maxBufferedBytes: 256 * kib }))
      const first = yield* pull
      yield* waitTurns(50)
      // Nobody pulls: reading stopped after the bound (plus what Node itself buffers), not at 64 MB.
      assert.isTrue(readable.isPaused())
      const waiting = produced() * 64 * kib
      assert.isAtMost(waiting, first.length * 64 * kib + 256 * kib + readable.readableHighWaterMark + 2 * 64 * kib)
      const batch = yield* pull
      assert.isAtLeast(batch.length * 64 * kib, 256 * kib)
      yield* waitTurns(50)
      assert.isAbove(produced() * 64 * kib, waiting)
    })))

  it.effect("fails with onError when the source errs or closes before its end", () =>
    Effect.gen(function*() {
      const broken = new Readable({ read() {} })
      broken.push(Buffer.from("part"))
      setImmediate(() => broken.destroy(new Error("connection reset")))
      const failed = yield* Effect.exit(Stream.runDrain(fromReadable(broken, (cause) => `failed: ${String(cause)}`, {
        destroyOnDone: false
      })))
      assert.deepStrictEqual(failed, Exit.fail("failed: Error: connection reset"))

      const closed = new Readable({ read() {} })
      setImmediate(() => closed.destroy())
      const early = yield* Effect.exit(Stream.runDrain(fromReadable(closed, () => "closed early", { destroyOnDone: false })))
      assert.deepStrictEqual(early, Exit.fail("closed early"))
    }))

  it.effect("when stopped early, destroys the source or leaves it paused for its owner", () =>
    Effect.gen(function*() {
      const owned = source(100, 16 * kib)
      yield* Stream.runDrain(Stream.take(fromReadable(owned.readable, String, { destroyOnDone: true }), 1))
      assert.isTrue(owned.readable.destroyed)

      const lent = source(100, 16 * kib)
      yield* Stream.runDrain(Stream.take(fromReadable(lent.readable, String, { destroyOnDone: false }), 1))
      assert.isFalse(lent.readable.destroyed)
      assert.isTrue(lent.readable.isPaused())
      assert.strictEqual(lent.readable.listenerCount("data"), 0)
    }))
})

describe("MediaStorage writes in batches", () => {
  it.effect("a batch that passes the limit stores nothing; batches are written whole and in order", () =>
    Effect.gen(function*() {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), "upload-body-"))
      const storage = yield* Effect.provide(Effect.service(MediaStorage), MediaStorage.layerDirectory(root))
      const key = "jobs/77777777-7777-4777-8777-777777777777/original.wav"
      const text = (value: string) => new TextEncoder().encode(value)
      const over = yield* Effect.flip(storage.write(key, Stream.fromArray([text("abc"), text("def")]), 5))
      assert.strictEqual(over._tag, "ObjectTooLarge")
      assert.isFalse(fs.existsSync(path.join(root, key)))
      const body = Stream.fromArrays([text("ab"), text("cd")], [text("ef")], [text("gh"), text("ij"), text("kl")])
      assert.strictEqual((yield* storage.write(key, body, 100)).bytes, 12)
      assert.strictEqual(fs.readFileSync(path.join(root, key), "utf8"), "abcdefghijkl")
      assert.deepStrictEqual(fs.readdirSync(path.dirname(path.join(root, key))), ["original.wav"])
      fs.rmSync(root, { recursive: true, force: true })
    }))
})

describe("direct upload bodies over a socket", () => {
  let server: TestServer
  let owner: { key: string }
  beforeAll(async () => {
    server = await startServer("upload-body", { rateLimitPerMinute: 10_000, signingSecret: Option.some(Redacted.make("upload-body-secret")) }, {
      pipeline: makeStandIn({ delayMs: 50, steps: 1 }).layer
    })
    owner = await server.account()
  })
  afterAll(async () => {
    await server?.close()
  })

  const ticketFor = async (size: number) => {
    const response = await postJson(server, "/v1/uploads/init", { filename: "big.wav", size_bytes: size }, owner.key)
    expect(response.status).toBe(200)
    return await response.json() as { upload_url: string; object_key: string }
  }
  const objectFolder = (objectKey: string) => path.dirname(path.join(server.storage.dataDir, "media", objectKey))

  it("a client that hangs up mid-PUT leaves no object and no temporary; the ticket then takes the whole body", async () => {
    const size = 8 * 1024 * 1024
    const ticket = await ticketFor(size)
    await new Promise<void>((resolve) => {
      const request = http.request(ticket.upload_url, { method: "PUT", headers: { "Content-Length": String(size) } })
      request.on("error", () => resolve())
      request.write(Buffer.alloc(1024 * 1024, 1), () => setTimeout(() => request.destroy(), 100))
      request.on("close", () => resolve())
    })
    const folder = objectFolder(ticket.object_key)
    await expect.poll(() => fs.existsSync(folder) ? fs.readdirSync(folder) : [], { timeout: 5_000 }).toEqual([])

    const body = Buffer.alloc(size)
    for (let i = 0; i < size; i += 4096) body.writeUInt32LE(i, i)
    const response = await fetch(ticket.upload_url, { method: "PUT", body })
    expect(response.status, await response.clone().text()).toBe(200)
    expect(Buffer.compare(fs.readFileSync(path.join(server.storage.dataDir, "media", ticket.object_key)), body)).toBe(0)
    expect(fs.readdirSync(folder)).toEqual([path.basename(ticket.object_key)])
  })
})
