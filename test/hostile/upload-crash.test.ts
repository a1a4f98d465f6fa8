/**
 * SIGKILL during a multipart upload: the real `verbatim serve` process is killed while the
 * `file` part is streaming in, then started again on the same storage. The write went to a
 * temporary (never under the object's key), and the watchdog's orphan sweep removes it once
 * idle past VERBATIM_UPLOAD_ORPHAN_SECONDS (2 s here): no partial file and no job remain.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestStorage, type TestStorage } from "../support/database.ts"
import { sleep } from "../support/jobsClient.ts"
import { runCliJson, type ServerProcess, startServerProcess } from "../support/process.ts"

let storage: TestStorage
let env: Record<string, string>
let apiKey: string
const processes: Array<ServerProcess> = []

beforeAll(async () => {
  storage = await makeTestStorage("upload-crash")
  env = { ...storage.env, VERBATIM_UPLOAD_ORPHAN_SECONDS: "2", VERBATIM_RATE_LIMIT_PER_MINUTE: "10000" }
  await runCliJson(["admin", "account", "create", "--email", "crash@example.com", "--api-access"], env)
  apiKey = (await runCliJson<{ key: string }>(["admin", "key", "create", "--email", "crash@example.com"], env)).key
}, 120_000)

afterAll(async () => {
  for (const server of processes) await server.stop("SIGKILL")
  await storage?.dispose()
})

const start = async () => {
  const server = await startServerProcess(env, 90_000)
  processes.push(server)
  return server
}

const mediaRoot = () => path.join(storage.dataDir, "media")

/** Every file below the media folder, relative to it. */
const mediaFiles = () =>
  fs.existsSync(mediaRoot())
    ? fs.readdirSync(mediaRoot(), { recursive: true, encoding: "utf8" }).filter((name) =>
      // `.runners/` holds the processes' markers (shared media check), not media.
      !name.startsWith(".runners") && fs.statSync(path.join(mediaRoot(), name)).isFile()
    )
    : []

/** Starts a multipart upload and sends `sent` bytes of its file part, then neither ends nor closes it. */
const stalledUpload = (server: ServerProcess, sent: number) => {
  const boundary = "----verbatim-crash-boundary"
  const head = new TextEncoder().encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="meeting.wav"\r\n` +
      "Content-Type: audio/wav\r\n\r\n"
  )
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => {
      controller.enqueue(head)
      controller.enqueue(new Uint8Array(sent).fill(1))
    }
  })
  // The connection dies with the server; that is the point.
  fetch(`${server.url}/v1/transcribe`, {
    method: "POST",
    headers: { "X-API-Key": apiKey, "Content-Type": `multipart/form-data; boundary=${boundary}` },
    body,
    duplex: "half"
  } as RequestInit).catch(() => undefined)
}

describe("kill -9 during a multipart upload", () => {
  it("leaves no partial file and no job after a restart on the same storage", async () => {
    const first = await start()
    stalledUpload(first, 4 * 1024 * 1024)
    // Wait until the server has written some of the part to disk.
    const deadline = Date.now() + 30_000
    while (!mediaFiles().some((name) => name.endsWith(".partial"))) {
      if (Date.now() > deadline) throw new Error(`no upload temporary appeared:\n${first.output().slice(-2000)}`)
      await sleep(100)
    }
    await first.stop("SIGKILL")
    expect(first.child.signalCode).toBe("SIGKILL")
    // What the kill left: only a temporary, nothing under an object's key.
    const left = mediaFiles()
    expect(left.length).toBeGreaterThan(0)
    expect(left.every((name) => name.endsWith(".partial")), left.join(", ")).toBe(true)

    const second = await start()
    const swept = Date.now() + 45_000
    while (mediaFiles().length > 0) {
      if (Date.now() > swept) throw new Error(`still there: ${mediaFiles().join(", ")}\n${second.output().slice(-2000)}`)
      await sleep(250)
    }
    const list = await fetch(`${second.url}/v1/jobs`, { headers: { "X-API-Key": apiKey } })
    expect(list.status).toBe(200)
    expect((await list.json() as { jobs: Array<unknown> }).jobs).toEqual([])
  })
})
